"""The record and its file: the line format, normalisation and limits, id-aware merges, the store's
locked read-modify-write and every risky disk operation. Runs no git."""
