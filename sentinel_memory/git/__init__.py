"""git: every process we start (`command`), the merge driver and diff textconv (`drivers`), the
repository's history (`history`) and the stale marks read from it (`staleness`)."""
