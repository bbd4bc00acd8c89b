"""Search: the terms of a text, the index of a snapshot, ranking, how strongly a record matches
(Match, STRONG), and the grouping by topic that compaction uses."""

from .match import STRONG, Match

__all__ = ["STRONG", "Match"]
