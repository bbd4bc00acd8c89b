"""How strongly a record matches a query and the files asked about, and why (docs/contract.md
§4.2): the measure on search/match.py's scale, over a SearchIndex (search/index.py), which keeps what
it reads of each record (its terms, the files it cites and their directories) between queries."""

from __future__ import annotations

from collections.abc import Sequence

from ..record import citations
from ..record.records import Entry, topic_of
from .index import common, idf, parent
from .match import (
    COMMON_FILE,
    DIRECTORY,
    EVERYDAY_NAMES,
    FILE,
    IDENTIFIER,
    NAMED_AMONG,
    PROJECT_FILE,
    RARITY_FROM,
    STRONG,
    TOPIC,
    WORDS,
    Match,
    Query,
)
from .terms import GENERIC_WORDS, record_terms, terms, words

TYPE_CHECKING = False  # (typing costs an import a hook need not pay: mypy reads this as True)
if TYPE_CHECKING:
    from .index import SearchIndex

CANDIDATES = 30  # the best-ranked matching records `strongest` measures


def strongest(index: SearchIndex, query: str, asked: list[str], former: Sequence[str], limit: int) -> list[Match]:
    """The records of `index` that match the query and the files asked about (`former`: the paths
    git renamed to them) strongly (STRONG), at most `limit`, in the search's order: of the
    CANDIDATES best-ranked, those whose strength passes. The strength says whether a record is
    worth showing unasked; which of those come first is the ranking's to say (a lesson about the
    file asked about before a change that touched it among many others, contract §4.2)."""
    ranked = index.ranked(index.query_terms(query or ""), None, with_named_files(index, query, asked), former)
    measured = Query.of(query or "", asked, former)
    found = (measure(index, e, measured) for _, e in zip(range(CANDIDATES), ranked.matching(), strict=False))
    return [m for m in found if m.strength >= STRONG][:limit]


def measure(index: SearchIndex, entry: Entry, query: Query) -> Match:
    """How strongly this entry's record matches the query and the files asked about, and why
    (search/match.py's scale)."""
    held = index.held.get(entry)
    if held is None:
        topic_terms, body = record_terms(entry.record)
        cited = set(citations.of(entry.record))
        held = index.held[entry] = (topic_terms | body, cited, {parent(p) for p in cited})
    terms_held, cited, folders = held
    records = len(index.entries)
    strength, reasons, found, as_file, weak = 0.0, [], set(), set(), 0.0
    for path in query.files:
        if path in cited:
            worth = _file_weight(index, path, records)
            if worth < FILE:
                weak += worth
            else:
                strength += worth
            reasons.append(f"file {path}")
            as_file.update(words(path.rsplit("/", 1)[-1]))
            found.add(parent(path))
    for old in query.former:
        if old in cited:
            worth = _file_weight(index, old, records)  # README.rst, renamed README.md: still a project file
            if worth < FILE:
                weak += worth
            else:
                strength += worth
            reasons.append(f"file {old} (renamed since)")
    for name in query.file_names:
        paths = _named(index, name)
        chosen = [p for p in paths if p in cited and p not in query.files]
        if chosen and len(paths) <= NAMED_AMONG:
            worth = _file_weight(index, chosen[0], records)
            if worth < FILE:
                weak += worth
            else:
                strength += worth
            reasons.append(f"file {chosen[0]} (named {name})")
            as_file.update(words(name))
    for folder in dict.fromkeys(parent(p) for p in query.files):
        if folder and folder in folders and folder not in found:
            strength += DIRECTORY * rarity(len(index.dir_postings[folder]), records)
            reasons.append(f"directory {folder}/")
    for term, shown in query.identifiers.items():
        if term in terms_held and not common(index.holders(term), records):
            strength += IDENTIFIER
            reasons.append(f"identifier {shown}")
    topic, named = entry.record.get("topic"), set()
    if (
        isinstance(topic, str)
        and query.names(topic)
        and not common(len(index.by_topic[topic_of(entry.record)]), records)
    ):
        named = terms(topic) - GENERIC_WORDS
        parts = set(words(topic.replace("_", " ")))
        if parts and parts <= GENERIC_WORDS:  # _version: of generic words only
            named = set()
        # Named only inside a compound word (the topic mode in "dark-mode"): only when the record
        # holds that compound (go-toml in a lesson about bumping go-toml, topic toml).
        inside = query.only_in_compounds(topic)
        if inside and not _holds_any(entry.record, inside):
            named = set()
        if named and not named <= as_file:  # topic readme, named by README.md: counted as the file
            if query.named_only_by_project_files(topic) or _names_project_file(topic, cited):
                weak += COMMON_FILE  # build, named by build.gradle.kts; settings of .vscode/settings.json
            else:
                spread = max(index.holders(t) for t in named)
                strength += TOPIC * rarity(spread, records) / query.chance
            reasons.append(f"topic {topic}")
    # Weak files together are no stronger than one; a file's name counts once, as the file
    # (CHANGELOG.md's `changelog`, README.md's topic `readme`), and a topic named only by a project
    # file's name, as that file.
    strength += min(weak, COMMON_FILE)
    shared, summed = [], 0.0
    for word in query.words:
        if word in terms_held and word not in named and word not in as_file and word not in GENERIC_WORDS:
            holders = index.holders(word)
            if not common(holders, records):
                shared.append(word)
                summed += rarity(holders, records) ** 2
    if shared:
        strength += summed / (WORDS * query.chance)
        reasons.append("words: " + ", ".join(query.written.get(w, w) for w in shared))
    # Why a record a Korean word found is listed: its English name, which orders but is no evidence.
    code = [f"{term} ({korean})" for term, korean in query.code_names.items() if term in terms_held]
    if code:
        reasons.append("code names: " + ", ".join(code))
    return Match(entry.record, strength, tuple(reasons))


def _names_project_file(topic: str, cited: set[str]) -> bool:
    """Whether the topic is an everyday word (EVERYDAY_NAMES) that is the name, less its extensions,
    of a project file the record cites (PROJECT_FILE): `settings` of `.vscode/settings.json`, `setup`
    of `setup.py`. Named in a query such a word is no more evidence than that file, which is weak: "a
    settings page" is not about an editor's settings. A tool's name stays a topic (`dependabot`)."""
    wanted = topic.replace("_", " ").replace("-", " ").strip().casefold()
    return wanted in EVERYDAY_NAMES and any(
        PROJECT_FILE.search(path) and path.rsplit("/", 1)[-1].lstrip(".").split(".", 1)[0].casefold() == wanted
        for path in cited
    )


def _holds_any(record: dict, phrases: tuple[str, ...]) -> bool:
    """Whether the record's text or cited paths hold one of these (case-folded) phrases."""
    text = " ".join(
        str(v)
        for v in (record.get("missing_context"), record.get("lesson"), record.get("ask_next_time"), record.get("files"))
        if v
    ).casefold()
    return any(p in text for p in phrases)


def _file_weight(index: SearchIndex, path: str, records: int) -> float:
    """What a cited file asked about is worth: FILE, or COMMON_FILE for a file more than a fifth
    of the records cite or a file every project of its kind has (PROJECT_FILE)."""
    if common(len(index.file_postings[path]), records) or PROJECT_FILE.search(path):
        return COMMON_FILE
    return FILE


def with_named_files(index: SearchIndex, query: str, asked: Sequence[str]) -> list[str]:
    """The files asked about, and the cited files the query names by a file name alone that at
    most NAMED_AMONG cited paths have (`crash in main.go`: cmd/server/main.go), so that the ranking
    brings their records in as the measure counts them, even when the name is made of words that
    no record's terms hold (main and go are a path's generic parts). For the ranking only: the
    measure counts such a file by its name (Query.file_names)."""
    names = Query.file_names_of(query or "")[:NAMES_RANKED]
    if not names:
        return list(asked)
    found = [p for name in names if len(paths := _named(index, name)) <= NAMED_AMONG for p in paths]
    return list(dict.fromkeys([*asked, *found]))


NAMES_RANKED = 20  # the file names of a query (its first) that bring their records into the ranking


def _named(index: SearchIndex, name: str) -> list[str]:
    """The cited paths whose file name is `name` (case ignored), from a map of the index's
    cited paths by name made when a query first names a file."""
    names = index.by_name
    if names is None:
        names = {}
        for path in index.file_postings:
            names.setdefault(path.rsplit("/", 1)[-1].casefold(), []).append(path)
        index.by_name = names
    return names.get(name.casefold(), [])


def rarity(holders: int, records: int) -> float:
    """A term's weight against that of a term only one record holds: 1 down towards 0, in a
    memory of at least RARITY_FROM records (in a small one, a word that two of three
    records hold is not a common word)."""
    records = max(records, RARITY_FROM)
    return idf(holders, records) / idf(1, records)
