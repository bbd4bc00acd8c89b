"""Related through the code (docs/contract.md §4.2, rule 2's last step): the records that cite the
files the best word matches cite are about the same part of the project, whether or not they share
the query's words. A task's words find a few records; the files those records agree on find the
other lessons about the code the task will touch.

The VOTERS best-scored records vote for the files they cite: each vote is the record's score
against the best one, times the file's rarity (search/index.py's, 1 for a file one record cites;
a file more than a fifth of the records cite gets no vote: it is evidence of no subject). A record's score then gains, times the best score, the votes of the files it cites, less
its own: a record is not lifted by its own files alone. Records that hold no query word but cite a
voted file join the ranking after gaining their votes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from itertools import repeat
from operator import add

VOTERS = 20  # the best-scored records whose files vote


class Votes:
    """The votes of the best matches' files: path -> its vote, and each voter's own vote for a path
    (which it does not gain)."""

    def __init__(self) -> None:
        self.votes: dict[str, float] = {}
        self.own: dict[tuple[int, str], float] = {}

    def through(self, rank: int, cited: Sequence[str]) -> list[str]:
        """The files of `cited` (the paths the record of `rank` cites) that it gains through."""
        return [p for p in dict.fromkeys(cited) if self.votes.get(p, 0.0) - self.own.get((rank, p), 0.0) > 1e-9]


def gains(
    voters: Sequence[int],
    scores: Mapping[int, int],
    cited: Callable[[int], Sequence[str]],
    postings: Mapping[str, Sequence[int]],
    rarity: Callable[[int], float | None],
) -> tuple[dict[int, int], Votes]:
    """rank -> what a record gains (as an int on the scale of `scores`) from the files that the
    `voters` (the best-scored ranks, best first; scores as search/index.py's _scores gives them)
    cite; and the votes. `cited(rank)` gives the paths a record cites; `postings` the ranks citing
    each path; `rarity(holders)` a file's rarity, or None for a common file."""
    found = Votes()
    best = scores[voters[0]] if voters else 0
    if best <= 0:
        return {}, found
    votes, own = found.votes, found.own
    for rank in voters:
        share = scores[rank] / best
        for path in dict.fromkeys(cited(rank)):
            worth = rarity(len(postings.get(path, ())))
            if worth:
                votes[path] = votes.get(path, 0.0) + share * worth
                own[rank, path] = share * worth
    if not votes:
        return {}, found
    # Summed in C (map, zip, dict.update), as a voted file may be cited by hundreds of records; per
    # record in the votes' order, then its own votes taken off: the same sums whatever the postings'
    # order (a derived index's and a fresh one's differ).
    gained: dict[int, float] = {}
    get = gained.get
    for path, vote in votes.items():
        held = postings[path]
        gained.update(zip(held, map(add, map(get, held, repeat(0.0)), repeat(vote)), strict=False))
    for (rank, _), vote in own.items():
        gained[rank] -= vote
    scale = float(best)
    return {rank: int(gain * scale) for rank, gain in gained.items() if gain * scale >= 1}, found
