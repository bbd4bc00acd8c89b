"""Search: the index of a snapshot's records, its derivation after a write, and ranking. The terms
of a text are search/terms.py's; the ranked entries and the walk that fits them into a token budget,
search/ranked.py's.

Words are lower-cased runs of letters and digits; Hangul and other CJK runs also yield
character bigrams, because Korean attaches particles to words ("결제모듈을" should still match
"결제 모듈"). A query only orders records: nothing is ever dropped because of a low score.

search/kept.py keeps the index of the snapshot last searched between searches; after a write it
derives the next one from it (SearchIndex.derive) at the cost of the changed records.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from itertools import repeat
from operator import add, mul, sub

from ..gcpause import paused
from ..git.staleness import stamp_seconds
from ..record import citations
from ..record.records import Entry, is_principle, recency, topic_of
from ..record.snapshot import Snapshot
from .ranked import Card, Ranked, fit
from .terms import GENERIC_WORDS, path_terms, record_terms, shares, stem, terms  # noqa: F401 (stem, terms: this module's surface too)

TYPE_CHECKING = False  # (typing costs an import a hook need not pay: mypy reads this as True)
if TYPE_CHECKING:
    from .ranked import Layout

TOPIC_WEIGHT = 2  # a query term in the topic weighs twice one in the text (once, if also in the text)
PATH_WEIGHT = 1.5  # a query term in the path of a file the record cites (not in its topic) weighs 1.5 times
K1, B = 1.2, 0.4  # BM25's saturation and length normalisation (each term counts once per record)
# A record's score is multiplied by 1 + exp(-age / 365), its age in days behind the newest record:
# up to twice for the newest, 1.37 at a year; the same past five years.
_RECENCY = [1 + math.exp(-age / 365) for age in range(5 * 365 + 1)]
# A term held by more than COMMON of the records (and by more than COMMON_FLOOR of them) is common:
# it makes records match only when no rarer query term matches any (else it only orders the records
# those match), and never makes a match strong.
COMMON, COMMON_FLOOR = 0.2, 5
# Near the files asked about: each file asked about that the record cites (or the path git renamed
# to it) adds its weight, idf over the records that cite it; each directory of one that the record
# cites a file in adds DIRECTORY times the directory's. A record near the files comes before every
# record that is not, one citing a file asked about before one near through a directory only;
# among them, FILES times their nearness plus the words' score orders.
DIRECTORY, FILES = 0.25, 4.0
# A record's nearness is divided by the square root of the number of files it cites: a commit that
# changed many files is less about any one of them ("WIP", "modernise the code base").


def common(holders: int, records: int) -> bool:
    """Whether a term (or a file) that `holders` of `records` hold is common (COMMON)."""
    return holders > COMMON * records and holders > COMMON_FLOOR


def idf(holders: int, records: int) -> float:
    """BM25's weight of a term that `holders` of `records` hold: rarer terms weigh more."""
    return math.log(1 + (records - holders + 0.5) / (holders + 0.5))


def parent(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


# Every entry of an index has a rank: an int in static order (principles, newest, id), with
# room between neighbours, so that a derived index gives a new entry one without renumbering
# the others. Ranks stay below 2**30, where ints are one machine word (cheap to hash and compare):
# a fresh index starts them at the middle, up to 65,536 apart, leaving the lower half for newer
# entries (the newest come first).
_LIMIT = 1 << 30  # every rank is below it: a query's sort key is rank - score * _LIMIT
_SCALE = 1 << 10  # a score's int: its value in 1/1024ths
_TIER = 1 << 40  # nearness to the files outweighs any score of words
_CITES = 1 << 36  # and citing a file asked about outweighs any nearness through a directory alone


class SearchIndex:
    """An inverted index over one snapshot's entries, built once and reused while the file is
    unchanged: a query then touches only the entries that contain its terms.

    Order: nearness to the files asked about (_near), then the score of the query's words (BM25
    on the memory itself; topic matches weigh two, matches in a cited path 1.5), then the static
    order: principles, then the newest, then id. `entries` are in static order and `ranks`
    (ascending) go with them; postings and topics list ranks. Queries answer with entries."""

    def __init__(self, entries: Iterable[Entry]) -> None:
        with paused():  # see gcpause: the collector tripled this at 10,000 records
            self.entries = sorted(entries, key=_static_key, reverse=True)
            self.space = min((_LIMIT // 2) // (len(self.entries) + 1), 1 << 16)
            self.ranks = list(range(_LIMIT // 2, _LIMIT // 2 + len(self.entries) * self.space, self.space))
            self._by_rank: dict[int, Entry] | None = None
            self.principles = sum(1 for e in self.entries if is_principle(e.record))
            self.topic_postings: dict[str, list[int]] = {}  # term -> the ranks of the entries that hold it
            self.body_postings: dict[str, list[int]] = {}
            self.path_postings: dict[str, list[int]] = {}  # the body's terms that a cited path holds
            self.by_topic: dict[object, list[int]] = {}  # exact topic -> its entries' ranks
            self.file_postings: dict[str, list[int]] = {}  # cited path -> ranks
            self.dir_postings: dict[str, list[int]] = {}  # directory of a cited path -> ranks
            self.lengths: dict[int, int] = {}  # rank -> terms its record holds
            self.cited: dict[int, int] = {}  # rank -> how many files its record cites (when any)
            self.days: dict[int, int] = {}  # rank -> the day (since 1970) of its record's recency
            self.total_length = 0
            self._factors: dict[int, float] = {}  # rank -> its score factor (_add_factors)
            # entry -> its block as search lists it, that text's estimated tokens and UTF-8 bytes;
            # made when first listed, shared with the indexes derived from this one.
            self._cards: dict[Entry, Card] = {}
            # entry -> (its record's terms, the files it cites, their directories); made when first
            # measured (search/strength.py), shared like the cards.
            self.held: dict[Entry, tuple[set[str], set[str], set[str]]] = {}
            self.by_name: dict[str, list[str]] | None = None  # a file name -> the cited paths (search/strength.py)
            for rank, entry in zip(self.ranks, self.entries, strict=True):
                self._index(entry, rank, _add)

    def _index(self, entry: Entry, rank: int, change) -> None:
        topic, body = record_terms(entry.record)
        for term in topic:
            change(self.topic_postings, term, rank)
        body -= topic
        for term in body:
            change(self.body_postings, term, rank)
        for term in path_terms(entry.record) - topic:
            change(self.path_postings, term, rank)
        change(self.by_topic, topic_of(entry.record), rank)
        files = citations.of(entry.record)
        for path in dict.fromkeys(files):
            change(self.file_postings, path, rank)
        if change is _remove:
            self.cited.pop(rank, None)
        elif files:
            self.cited[rank] = len(dict.fromkeys(files))
        for folder in dict.fromkeys(parent(p) for p in files):
            if folder:
                change(self.dir_postings, folder, rank)
        length = len(topic) + len(body)
        if change is _remove:
            del self.lengths[rank], self.days[rank]
            self.total_length -= length
        else:
            self.lengths[rank] = length
            self.days[rank] = (stamp_seconds(recency(entry.record)) or 0) // 86400
            self.total_length += length

    def derive(self, removed: Iterable[Entry], added: Iterable[Entry]) -> SearchIndex | None:
        """The index of these entries less `removed`, plus `added`, made from this one (left as it
        is: another thread may be reading it) by changing only what those entries touch. None if
        the difference does not fit this index (the caller then builds one afresh)."""
        new = SearchIndex.__new__(SearchIndex)
        new.entries, new.ranks = list(self.entries), list(self.ranks)
        new.topic_postings, new.body_postings = dict(self.topic_postings), dict(self.body_postings)
        new.path_postings = dict(self.path_postings)
        new.by_topic = dict(self.by_topic)
        new.file_postings, new.dir_postings = dict(self.file_postings), dict(self.dir_postings)
        new.lengths, new.total_length, new.days = dict(self.lengths), self.total_length, dict(self.days)
        new.cited = dict(self.cited)
        new._factors = {}  # the average length and the newest record may differ
        new.principles, new.space, new._by_rank, new._cards = self.principles, self.space, None, self._cards
        new.held, new.by_name = self.held, None
        with paused():
            for entry in removed:
                try:
                    at = new.entries.index(entry)  # identity: entries define no equality
                except ValueError:
                    return None
                new._index(entry, new.ranks[at], _remove)
                del new.entries[at], new.ranks[at]
                new.principles -= is_principle(entry.record)
                self._cards.pop(entry, None)
                self.held.pop(entry, None)
            for entry in added:
                at = _static_position(new.entries, entry)
                if at < len(new.entries) and new.entries[at] is entry:
                    return None
                rank = _rank_between(
                    new.ranks[at - 1] if at else None, new.ranks[at] if at < len(new.ranks) else None, new.space
                )
                if rank is None:
                    return None
                new.entries.insert(at, entry)
                new.ranks.insert(at, rank)
                new._index(entry, rank, _with_new_list)
                new.principles += is_principle(entry.record)
        return new

    @property
    def by_rank(self) -> dict[int, Entry]:
        """rank -> entry, made once per index (in C) when a query first needs it."""
        if self._by_rank is None:
            self._by_rank = dict(zip(self.ranks, self.entries, strict=True))
        return self._by_rank

    def ranked(
        self,
        query_terms: Iterable[str] | Mapping[str, float],
        topic: object = None,
        files: Iterable[str] = (),
        former: Iterable[str] = (),
    ) -> Ranked:
        """`topic`'s entries (all when None) ranked for query_terms (a term -> its share of a word,
        as query_terms gives them; terms without shares count whole) and the files asked about
        (`former`: paths git renamed to one of them)."""
        near = self._near(files, former)
        scores = self._scores(query_terms, ordering=not near)
        if near:
            scores.update(zip(near, map(add, map(scores.get, near, repeat(0)), near.values()), strict=False))
        # One int per matching entry, a higher score first, then the static order (rank < _LIMIT);
        # made and sorted in C (map), as there may be thousands.
        keys = list(map(sub, scores.keys(), map(mul, scores.values(), repeat(_LIMIT))))
        keys.sort()
        scored = list(map(_LIMIT.__rmod__, keys))
        if topic is None:
            scope = self.ranks
        else:
            scope = sorted(self.by_topic.get(topic, ()))
            inside = set(scope)
            scored = [r for r in scored if r in inside]
        first_log = self.ranks[self.principles] if self.principles < len(self.ranks) else _LIMIT
        return Ranked(self.by_rank, scored, scope, first_log)

    def query_terms(self, query: str) -> dict[str, float]:
        """The terms a query is ranked by, each with its share of a word (search/terms.py shares):
        terms(), without the character pairs of a Hangul stem that a record holds whole, the pairs
        of a stem sharing its weight (docs/contract.md §4.2)."""
        return shares(query, self._holds)

    def _holds(self, term: str) -> bool:
        return term in self.topic_postings or term in self.body_postings

    def holders(self, term: str) -> int:
        """How many records hold a term (in the topic or the text)."""
        return len(self.topic_postings.get(term, ())) + len(self.body_postings.get(term, ()))

    def _scores(self, query_terms: Iterable[str] | Mapping[str, float], ordering: bool = True) -> dict[int, int]:
        """rank -> the BM25 score of its record for these terms (binary term frequency, the
        topic's terms weighing TOPIC_WEIGHT), as an int (_SCALE per unit), for the records that
        hold a term that is neither common nor generic (all the records that hold one, when no
        such term is held); the common and generic terms add their weight to those records only,
        and only when `ordering` (no record is near the files asked about: nearness orders them)."""
        records = len(self.entries)
        weights: dict[int, float] = {}
        # Summed in C (map, zip, dict.update), as a common term may be held by thousands of records;
        # in a fixed order, so that a derived index sums exactly as one built afresh.
        held = []
        # A lone ASCII letter or a number of one or two digits (the parts of "4.4.6") orders nothing
        # unless the query has nothing else.
        share = query_terms if isinstance(query_terms, Mapping) else dict.fromkeys(query_terms, 1.0)
        counted = {t for t in share if not (t.isascii() and (len(t) == 1 or (t.isdigit() and len(t) <= 2)))}
        for term in sorted(counted or share):
            topic, body = self.topic_postings.get(term, ()), self.body_postings.get(term, ())
            holders = len(topic) + len(body)
            if holders:
                paths = self.path_postings.get(term, ())
                held.append((topic, body, holders, term in GENERIC_WORDS, paths, share[term]))
        rare: list[tuple] = []
        weak: list[tuple] = []  # common or generic terms
        for h in held:
            (weak if h[3] or common(h[2], records) else rare).append(h)
        for topic, body, holders, _, paths, part in rare or weak:  # only weak terms match: they order after all
            self._add(weights, topic, body, paths, holders, part)
        if not weights:
            return {}
        # Beside a rarer term, a weak term makes no record match but weighs among those it matched.
        if rare and ordering:
            matched = weights.__contains__
            for topic, body, holders, _, paths, part in weak:
                topic, body, paths = (list(filter(matched, postings)) for postings in (topic, body, paths))
                self._add(weights, topic, body, paths, holders, part)
        factors = self._factors
        missing = [rank for rank in weights if rank not in factors]
        if missing:
            self._add_factors(missing)
        return dict(zip(weights, map(int, map(mul, weights.values(), map(factors.__getitem__, weights))), strict=False))

    def _add_factors(self, ranks: list[int]) -> None:
        """Keep each rank's factor: BM25's length normalisation (by the record's length in terms
        against this index's average) times the recency boost (by its age in days behind this
        index's newest record), times _SCALE. Made once per rank and index."""
        records = len(self.entries)
        lengths = list(map(self.lengths.__getitem__, ranks))
        low, high = K1 * (1 - B), K1 * B / ((self.total_length / records) or 1)
        table = [(K1 + 1) * _SCALE / (1 + low + high * length) for length in range(max(lengths) + 1)]
        days, newest = (
            self.days,
            max(self.days[self.ranks[0]], self.days[self.ranks[min(self.principles, records - 1)]]),
        )
        # An age below 0 (a record dated after the one static order puts first: a date written by
        # hand in another shape, "2026/01/05", sorts as text before the others) counts as 0.
        boost = map(
            _RECENCY.__getitem__,
            map(
                min,
                map(max, map(sub, repeat(newest), map(days.__getitem__, ranks)), repeat(0)),
                repeat(len(_RECENCY) - 1),
            ),
        )
        self._factors.update(zip(ranks, map(mul, map(table.__getitem__, lengths), boost), strict=False))

    def _add(
        self,
        weights: dict[int, float],
        topic: Sequence[int],
        body: Sequence[int],
        paths: Sequence[int],
        holders: int,
        share: float = 1.0,
    ) -> None:
        """Add a term's weight (times its share of a query word) to the records holding it: once in
        the text, TOPIC_WEIGHT times in the topic, PATH_WEIGHT times in a cited path (`paths` is part
        of `body`)."""
        weight, get = idf(holders, len(self.entries)) * share, weights.get
        for postings, value in ((body, weight), (topic, weight * TOPIC_WEIGHT), (paths, weight * (PATH_WEIGHT - 1))):
            if postings:
                weights.update(zip(postings, map(add, map(get, postings, repeat(0.0)), repeat(value)), strict=False))

    def _near(self, files: Iterable[str], former: Iterable[str]) -> dict[int, int]:
        """rank -> the nearness score of the records near the files asked about: _TIER, plus _CITES
        for one that cites a file asked about (or its former name), plus FILES times the weights of
        those files it cites and DIRECTORY times those of their directories it cites a file in,
        over the square root of the number of files it cites, as an int (_SCALE per unit)."""
        files = list(files)
        if not files:
            return {}
        records = len(self.entries)
        weight: dict[int, float] = {}
        get = weight.get
        for share, postings in [
            *((1.0, self.file_postings.get(p, ())) for p in dict.fromkeys([*files, *former])),
            *((DIRECTORY, self.dir_postings.get(d, ())) for d in dict.fromkeys(parent(p) for p in files) if d),
        ]:
            if postings:
                value = idf(len(postings), records) * share
                weight.update(zip(postings, map(add, map(get, postings, repeat(0.0)), repeat(value)), strict=False))
        citing = set().union(*(self.file_postings.get(p, ()) for p in dict.fromkeys([*files, *former])))
        scale, cited = FILES * _SCALE, self.cited
        return {
            rank: _TIER + (_CITES if rank in citing else 0) + int(value * scale / math.sqrt(cited[rank]))
            for rank, value in weight.items()
        }

    def fit(
        self, entries: Iterable[Entry], room: int, layout: Layout, marks=None, first: int = 1, byte_room: int = 0
    ) -> tuple[list[str], list[Entry], bool, int, int]:
        """The blocks of these entries, numbered from `first`, in order, as many as fit in `room`
        estimated tokens and `byte_room` UTF-8 bytes (0: no limit); the entries listed; whether
        all of them fit; and the tokens and bytes listed. `layout` makes the words (a record's
        card: its block with its estimated tokens and bytes; the numbered block), so this module
        stays apart from them. Only what is listed is rendered, each record's card once per index
        lineage. `marks(entry, card)` gives the card to list instead (the block with the record's
        stale mark under its header: the mark depends on git's HEAD, so it is not part of the card
        kept here)."""
        return fit(self._cards, entries, room, layout, marks, first, byte_room)


def _static_key(entry: Entry) -> tuple:
    return is_principle(entry.record), recency(entry.record), entry.id


def _static_position(entries: list, entry: Entry) -> int:
    """Where entry goes in entries, which are in descending static order (ids are unique)."""
    key, low, high = _static_key(entry), 0, len(entries)
    while low < high:
        middle = (low + high) // 2
        if _static_key(entries[middle]) > key:
            low = middle + 1
        else:
            high = middle
    return low


def _rank_between(before: int | None, after: int | None, space: int) -> int | None:
    """A rank between two neighbours' (None: no neighbour there), or None if there is no room."""
    if before is None and after is None:
        return _LIMIT // 2
    if after is not None and before is None:
        return after - space if after - space >= 0 else None
    if before is not None and after is None:
        return before + space if before + space < _LIMIT else None
    assert before is not None and after is not None
    return (before + after) // 2 if after - before > 1 else None


def _add(index: dict, key, rank: int) -> None:
    index.setdefault(key, []).append(rank)


def _with_new_list(index: dict, key, rank: int) -> None:
    index[key] = index.get(key, []) + [rank]  # a new list: the old one may be another index's


def _remove(index: dict, key, rank: int) -> None:
    left = [r for r in index[key] if r != rank]
    if left:
        index[key] = left
    else:
        del index[key]


def index_of(snap: Snapshot) -> SearchIndex:
    """The index of this snapshot, built from its records (KeptIndex keeps one between searches)."""
    return SearchIndex(snap.records.values())
