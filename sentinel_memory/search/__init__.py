"""Search: the terms of a text, the index of a snapshot, ranking, and the grouping by topic that
compaction uses."""
