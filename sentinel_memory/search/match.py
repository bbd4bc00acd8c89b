"""How strongly a record matches a query and the files asked about, and why (docs/contract.md
§4.2): the scale, its one threshold (STRONG) and the query as the measure reads it.
search/strength.py measures, over the index of search/index.py; this module holds what the measure
gives.

The scale counts evidence (docs/contract.md §4.2 states it). Each file asked about that the record
cites (or whose name before a git rename it cites) is worth FILE (COMMON_FILE for a file more than
a fifth of the records cite, or a project file: PROJECT_FILE; such weak files together count
COMMON_FILE at most, and a file's name is no word beside it); a directory of one, in which the
record cites another file, up to DIRECTORY; an identifier of the query (search/terms.py
identifier) that the record holds, IDENTIFIER; the record's exact topic named in the query, up to
TOPIC (named only inside a compound word, as mode in "dark-mode", only for a record that holds
that word; named only inside a project file's name, as build in build.gradle.kts, as weak as that
file); and the query's other words that the record holds, each its rarity squared (1 for a word
only this record holds, towards 0 for a word most hold), the sum over WORDS. Rarity is a term's
idf against that of a term one record holds, reckoned in a memory of at least RARITY_FROM records.
A common word (search/index.py common) or a generic one (search/terms.py GENERIC_WORDS: fix, add,
update...) counts for nothing; a topic in snake_case is named by its words; a file named without
its folder (conftest.py) counts as a file asked about when at most NAMED_AMONG cited paths have
that name (its words then count only as the file). In a query of more than LONG_QUERY words that
can count (not generic; a path's generic parts, src or py, are none), the topic's and the words'
weights are divided by that number over LONG_QUERY (Query.chance): a long text names a topic or
shares rare words by chance. The kind of change a query starts with (`build:`, `[FEAT]`: _KIND) is
no part of it, nor is a web address but the names in its path (_ADDRESS). A match is strong at
STRONG: one cited file or identifier, a topic few records' words name, or rare words worth as much.
"""

from __future__ import annotations

import re
import unicodedata

from ..lazy import lazy
from ..values import Value
from .terms import _EXTENSION, _WORD, GENERIC_WORDS, code_names, identifier, korean_stem, plain, stem, words, written

_PART = re.compile(r"[^\W_]+")  # a run of letters and digits: words, and the parts of snake_case
# A word whose parts are joined by hyphens or underscores (dark-mode, go-toml, read_timeout).
_COMPOUND = re.compile(r"[^\W_]+(?:[-_]+[^\W_]+)+")
# A file's name without a folder, as a prompt names it: letters before a dot and an extension that
# starts with a letter (conftest.py, walk.rs, test.yml, .gitignore; not 1.10.1 or a/b.py), Hangul
# right after it being a particle (결제안내.md를). The
# name's first part is a run with a letter in it, checked ahead (`[\w-]*[^\W\d_][\w-]*` took time
# quadratic in a long run: seconds for a pasted blob of 20,000 letters).
_FILE_NAME = re.compile(
    r"(?<![\w./\\-])(\.[^\W\d_][\w-]*|(?=[\w-]*[^\W\d_])[\w-]+(?:\.[\w-]+)*\.[A-Za-z][A-Za-z0-9]{0,9})"
    r"(?![A-Za-z0-9_/\\-]|\.\w)"
)
# The files nearly every project of its kind has, by name: its readme, changelog, licence and
# contribution guide, its ignore files, its package manifests and lock files, and the settings of
# its tools and framework (pre-commit, linters, coverage, dependency bots, bundlers, documentation
# builders: docs/conf.py, mkdocs.yml, docs/index.md; Spring Boot's application.yml; a GitHub Pages
# CNAME). A task touches them for reasons of its own (a new dependency, a new ignored folder, a
# linter's upgrade), so sharing one with a record is weak evidence, like a file most records cite.
PROJECT_FILE = lazy(
    r"(?:^|/)(?:(?:readme|changelog|changes|history|news|authors|contributors|contributing|license|licence"
    r"|copying|notice|code_of_conduct|security|maintainers|pull_request_template)(?:\.(?:md|markdown|rst|txt|adoc|org))?"
    r"|pull_request_template/[\w.-]+\.md"
    r"|\.(?:git|docker|npm|prettier|eslint)ignore|\.gitattributes|\.gitmodules|\.editorconfig|\.mailmap"
    r"|\.pre-commit-config\.ya?ml|dependabot\.ya?ml|renovate\.json5?|\.renovaterc(?:\.json5?)?|\.readthedocs\.ya?ml"
    r"|\.travis\.yml|\.?codecov\.ya?ml|\.coveragerc|\.flake8|\.?mypy\.ini|\.?pylintrc|\.?ruff\.toml|\.?rustfmt\.toml"
    r"|\.golangci\.(?:ya?ml|toml|json)|\.(?:eslintrc|prettierrc)(?:\.\w+)?|(?:eslint|prettier)\.config\.[cm]?[jt]s"
    r"|\.nvmrc|\.(?:node|python)-version|\.tool-versions|\.vscode/(?:settings|extensions|launch|tasks)\.json"
    r"|mkdocs\.ya?ml|docs?/(?:source/)?(?:conf\.py|index\.(?:md|rst))"
    r"|src/(?:main|test)/resources/application(?:-[\w-]+)?\.(?:ya?ml|properties)"
    r"|(?:webpack|vite|babel|jest|vitest|rollup)(?:\.[\w-]+)?\.config\.[cm]?[jt]s|\.babelrc(?:\.\w+)?|cname"
    r"|package(?:-lock)?\.json|npm-shrinkwrap\.json|yarn\.lock|pnpm-(?:lock|workspace)\.yaml|bun\.lockb?"
    r"|tsconfig(?:\.[\w-]+)?\.json|cargo\.(?:toml|lock)|go\.(?:mod|sum|work)|pyproject\.toml|setup\.(?:py|cfg)"
    r"|requirements(?:[-_.][\w-]+)?\.(?:txt|in)|manifest\.in|poetry\.lock|uv\.lock|pipfile(?:\.lock)?|tox\.ini"
    r"|(?:build|settings)\.gradle(?:\.kts)?|gradle(?:-wrapper)?\.properties|gradlew(?:\.bat)?|pom\.xml"
    r"|gemfile(?:\.lock)?|[\w-]+\.gemspec|composer\.(?:json|lock)|pubspec\.(?:yaml|lock)|mix\.(?:exs|lock))$",
    re.IGNORECASE,
)
NAMED_AMONG = 3  # a file name counts when at most this many cited paths have it
# The names of project files that are everyday words: such a word names a record's topic only as weakly
# as the file (`settings` of .vscode/settings.json against "a settings page").
EVERYDAY_NAMES = frozenset(
    """settings setup package build requirements application launch tasks extensions manifest security
    notice history changes news authors contributors contributing license licence copying maintainers""".split()
)
STRONG = 1.0  # the one threshold: a strength at or above it is a strong match
FILE = 1.0
COMMON_FILE = 0.5
IDENTIFIER = 1.0
TOPIC = 1.25
DIRECTORY = 0.4
RARITY_FROM = 50  # rarity is reckoned as in a memory of at least this many records
WORDS = 2.0  # the rarity a record's shared words must sum to for a strong match: two unique words
LONG_QUERY = 8  # past this many words that can count, a query's topic and words weigh less (Query.chance)


# The kind of change a commit subject or a task starts with, as conventional commits write it
# (`build: ...`, `style(ui): ...`, `[FEAT] ...`): what kind of work it is, not what it is about.
_KIND = re.compile(
    r"^\s*\[?(?:feat|feature|fix|bugfix|hotfix|docs?|style|refactor|perf|tests?|build|ci|chore|revert)\]?"
    r"(?=\s*(?:\([^)]*\))?!?\s*:|\])",
    re.IGNORECASE,
)


# A web address (a scheme such as https://, or www.) counts by the names in its path (the project
# and the package of github.com/pypa/wheel/...): its scheme and host, the parts every address of its
# site has (SITE_PARTS: blob, compare, releases...) and its version numbers are in every pasted bot
# message or release note, so they are no words of the query for the strength (_names_in).
_ADDRESS = re.compile(r"(?i)\b(?:[a-z][a-z0-9+.-]{0,15}://|www\.)[^\s<>()\[\]\"']*")
SITE_PARTS = frozenset(
    """blob tree raw blame commit commits compare release releases tag tags pull pulls issue issues
    master main edit wiki refs heads actions runs jobs download downloads archive""".split()
)
_VERSION_PART = re.compile(r"v?\d[\w.-]*", re.IGNORECASE)  # 0.12.0, v0.11.0...v0.12.0, 2150


def _names_in(address: re.Match) -> str:
    """The names in a web address's path, without its scheme, host, query and fragment, the parts
    every address of its site has, and version numbers (docs/contract.md §4.2)."""
    text = address.group()
    rest = text.split("://", 1)[1] if "://" in text else text[4:]  # without the scheme or www.
    path = re.split(r"[?#]", rest.partition("/")[2], maxsplit=1)[0]  # without the host
    kept = "/".join(
        p for p in path.split("/") if p and p.casefold() not in SITE_PARTS and not _VERSION_PART.fullmatch(p)
    )
    # A project file at its end (docs/news.rst) is named apart from the names before it (the
    # project and the package, pypa/wheel): those are no part of that file's path.
    tail = PROJECT_FILE.search(kept)
    if tail is not None and tail.start() > 0:
        kept = f"{kept[: tail.start()]} {kept[tail.start() :].lstrip('/')}"
    return " " + kept + " "  # still a path: a file name in it is no file named alone


class Match(Value):
    """A ranked record, how strongly it matches (on the scale above) and why ("file src/a.py",
    "identifier parse_args", "topic payment", "words: refund, rounding")."""

    __slots__ = ("record", "strength", "reasons")

    def __init__(self, record: dict, strength: float, reasons: tuple[str, ...] = ()) -> None:
        self.record = record
        self.strength = strength
        self.reasons = reasons

    @property
    def strong(self) -> bool:
        return self.strength >= STRONG

    def as_json(self) -> dict:
        return {"strength": round(self.strength, 2), "strong": self.strong, "reasons": list(self.reasons)}


class Query(Value):
    """A query as the measure reads it: its text (case-folded, for the topic), its words (as
    terms, without stop words), its identifiers (term -> as written), the files asked about, the
    paths git renamed to one of them, the file names it names without a folder (conftest.py), and
    the English code names of its Korean words (search/terms.py KO_EN), which a reason names but
    the strength does not count. Made by Query.of."""

    __slots__ = (
        "text",
        "words",
        "identifiers",
        "files",
        "former",
        "file_names",
        "raw",
        "chance",
        "code_names",
        "project_files",
        "beside_project_files",
        "stems",
        "written",
    )

    def __init__(
        self,
        text: str,
        words: tuple[str, ...],
        identifiers: dict[str, str],
        files: tuple[str, ...],
        former: tuple[str, ...],
        file_names: tuple[str, ...],
        raw: str,
        chance: float,
        code_names: dict[str, str],
        project_files: str,
        beside_project_files: str,
        stems: str,
        written: dict[str, str],
    ) -> None:
        self.text = text
        self.words = words
        self.identifiers = identifiers
        self.files = files
        self.former = former
        self.file_names = file_names
        self.raw = raw  # the text case-folded, as written
        self.chance = chance  # what the topic's and the words' weights are divided by (LONG_QUERY)
        self.code_names = code_names  # English term -> the Korean word (KO_EN)
        # The words of the project files the query names (build gradle kts), and its text without them.
        self.project_files = project_files
        self.beside_project_files = beside_project_files
        self.stems = stems  # text's words, a Korean one without its particles (결제에서 -> 결제, Board의 -> board)
        self.written = written  # a word's term -> the word as written (cookies)

    @classmethod
    def of(cls, text: str, files=(), former=()) -> Query:
        text = _KIND.sub("", unicodedata.normalize("NFC", text or ""), count=1)
        text = _ADDRESS.sub(_names_in, text)
        found = {stem(w.casefold()): w for w in _WORD.findall(text) if identifier(w)}
        said = tuple(dict.fromkeys(w for w in words(plain(text)) if w not in found and len(w) > 1 and not w.isdigit()))
        counted = len([w for w in said if w not in GENERIC_WORDS])
        inside: list[str] = []
        beside: list[str] = []
        for run in text.casefold().split():
            path = _path_of(run)
            name = path.rsplit("/", 1)[-1]
            is_file = (name.startswith(".") or _EXTENSION.search(name)) and PROJECT_FILE.search(path)
            (inside if is_file else beside).append(" ".join(_PART.findall(run)))
        return cls(
            " ".join(_PART.findall(text.casefold())),
            said,
            found,
            tuple(files),
            tuple(former),
            Query.file_names_of(text),
            text.casefold(),
            max(1.0, counted / LONG_QUERY),
            {stem(english): word for word in said for english in code_names(word) if stem(english) not in said},
            " | ".join(inside),
            " ".join(beside) if inside else "",
            _stemmed(text),
            written(plain(text)),
        )

    @staticmethod
    def file_names_of(text: str) -> tuple[str, ...]:
        """The file names a text names without a folder (conftest.py, main.go), as Query.of reads
        them."""
        text = _KIND.sub("", unicodedata.normalize("NFC", text or ""), count=1)
        return tuple(dict.fromkeys(m.group(1) for m in _FILE_NAME.finditer(_ADDRESS.sub(_names_in, text))))

    def only_in_compounds(self, topic: str) -> tuple[str, ...]:
        """The compound words of the query (dark-mode) that hold the topic's words as a part, when
        the query names the topic only there; () when it names it as words of their own too."""
        wanted = " ".join(_PART.findall(unicodedata.normalize("NFC", topic).casefold()))
        found: list[str] = []
        rest = self.raw
        for match in _COMPOUND.finditer(self.raw):
            parts = " ".join(_PART.findall(match.group()))
            if parts != wanted and re.search(rf"(?<!\w){re.escape(wanted)}(?!\w)", parts):
                found.append(match.group())
                rest = rest.replace(match.group(), " ")
        if not found or re.search(rf"(?<!\w){re.escape(wanted)}(?!\w)", " ".join(_PART.findall(rest))):
            return ()
        return tuple(dict.fromkeys(found))

    def named_only_by_project_files(self, topic: str) -> bool:
        """Whether the query names the topic only inside the names of project files it names
        (PROJECT_FILE: build.gradle.kts names the topic build, README.md readme): no more evidence
        than the file itself, which is weak."""
        if not self.project_files:
            return False
        wanted = " ".join(_PART.findall(unicodedata.normalize("NFC", topic).casefold()))
        named = re.compile(rf"(?<!\w){re.escape(wanted)}(?!\w)")
        return (
            bool(wanted)
            and named.search(self.project_files) is not None
            and not named.search(self.beside_project_files)
        )

    def names(self, topic: str) -> bool:
        """Whether the query names this topic exactly (as whole words, ignoring case; an underscore
        or a hyphen as a space: topic bug_report is named by "bug report"; a Korean particle after
        it, as 결제에서 or Payment의, is no part of the name)."""
        wanted = " ".join(_PART.findall(unicodedata.normalize("NFC", topic).casefold()))
        if not wanted:
            return False
        if re.search(rf"(?<!\w){re.escape(wanted)}(?!\w)", self.text):
            return True
        stemmed = _stemmed(topic)
        return bool(stemmed) and re.search(rf"(?<!\w){re.escape(stemmed)}(?!\w)", self.stems) is not None


def _stemmed(text: str) -> str:
    """The text's words, case-folded, a Latin word apart from the Hangul after it and a Hangul word
    without its particles and endings (search/terms.py korean_stem): what names a topic in Korean."""
    out = []
    for word in _WORD.findall(unicodedata.normalize("NFC", text).casefold()):
        for part in _PART.findall(word):
            out.append(korean_stem(part) if part[:1] >= "\uac00" and _HANGUL.match(part) else part)
    return " ".join(out)


_HANGUL = lazy(r"[\uac00-\ud7af]")  # (compiled when a part first starts at or past U+AC00)
_AFTER_NAME = re.compile(r"[#?:].*")  # a line number (:12), an anchor (#usage) or a query after a file's name
_AROUND = "`'\"()[]{}<>,;!*"  # what a sentence puts around a path


def _path_of(run: str) -> str:
    """The path a run of a text may be (`gradle/build.gradle.kts` of "(gradle\\build.gradle.kts):12."),
    with forward slashes, without what a sentence puts around it: PROJECT_FILE reads its name, and
    its folders where they decide (docs/conf.py)."""
    folder, _, name = run.replace("\\", "/").rpartition("/")
    name = _AFTER_NAME.sub("", name).strip(_AROUND).rstrip(".")
    folder = folder.lstrip(_AROUND)
    return f"{folder}/{name}" if folder else name
