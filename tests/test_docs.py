"""The docs keep up with the product: every tool, command, option and client is documented, and
the README's walkthrough runs as written."""

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from sentinel_memory.cli.commands import build_parser
from sentinel_memory.setup.initialise import AGENTS_SECTION

ROOT = Path(__file__).resolve().parents[1]
TOOLS = ("search_memory", "log_memory", "compact_memory")
READMES = [ROOT / "README.md", ROOT / "docs" / "README.ko.md"]


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _options(usage: str) -> list[str]:
    """The long options a command's usage line shows, but the --project every command shares."""
    return [o for o in dict.fromkeys(re.findall(r"--[\w-]+", usage)) if o != "--project"]


def test_every_command_and_option_is_in_the_command_reference():
    """docs/commands.md has a row for every command the CLI accepts, naming each of its options."""
    text = _read(ROOT / "docs" / "commands.md")
    rows = {m.group(1): m.group(0) for m in re.finditer(r"^\| `([\w-]+)[^\n]*", text, re.M)}
    _, commands = build_parser()
    assert set(commands) <= set(rows), f"undocumented commands: {sorted(set(commands) - set(rows))}"
    missing = {name: [o for o in _options(p.format_usage()) if o not in rows[name]] for name, p in commands.items()}
    assert not any(missing.values()), f"undocumented options: { {k: v for k, v in missing.items() if v} }"


def test_every_client_that_init_offers_is_in_the_client_guide():
    """docs/clients.md explains `init --client X` for every client init can configure."""
    _, commands = build_parser()
    offered = re.search(r"--client \{([^}]*)\}", commands["init"].format_usage()).group(1).split(",")
    text = _read(ROOT / "docs" / "clients.md")
    assert not [c for c in offered if f"--client {c}" not in text]


def test_the_agents_md_snippet_in_the_client_guide_is_what_init_writes():
    """The CLAUDE.md/AGENTS.md section shown in docs/clients.md is word for word what init writes."""
    assert AGENTS_SECTION.strip() in _read(ROOT / "docs" / "clients.md")


def test_every_tool_is_documented_and_registered():
    """Each MCP tool the server defines is described in docs/tools.md, both READMEs and the rules."""
    server = _read(ROOT / "sentinel_memory" / "server.py")
    defined = set(re.findall(r"^async def (\w+_memory)\(", server, re.M))
    assert defined == set(TOOLS)
    for doc in ("docs/tools.md", "README.md", "docs/README.ko.md", "sentinel_memory/setup/cursorrules.md"):
        text = _read(ROOT / doc)
        assert all(t in text for t in TOOLS), doc


def test_readme_opens_with_the_serve_and_test_commands_that_ci_runs():
    """README's first two code blocks install+serve and install+test; .ci/run runs the test block."""
    blocks = re.findall(r"```\n(.*?)\n```", _read(ROOT / "README.md"), re.S)
    assert "server.py" in blocks[0] and "requirements.txt" in blocks[0]
    assert "pytest" in blocks[1] and "requirements-dev.txt" in blocks[1]
    assert "<!-- test -->" in (ROOT / ".ci" / "run").read_text()


def test_the_install_commands_check_the_python_before_pip():
    """On a python below the floor, the README's commands (and the client guide's install) stop at
    `server.py --version`, which says so in one sentence, before pip, whose refusal of a locked
    dependency's versions names neither the product nor the version it needs."""
    blocks = re.findall(r"```\n(.*?)\n```", _read(ROOT / "README.md"), re.S)[:2]
    clients = re.findall(r"```\n(.*?)\n```", _read(ROOT / "docs" / "clients.md"), re.S)
    install = next(b for b in clients if "pip install" in b and "python3 -m venv .venv" in b)
    for block in [*blocks, install]:
        steps = re.split(r" && |\n", block)
        check = steps.index(".venv/bin/python server.py --version")
        assert steps[check - 1] == "python3 -m venv .venv" and "pip install" in steps[check + 1], block


def test_ci_lints_with_the_venv_it_made_before_it_tests():
    """.ci/run makes the venv from requirements-dev.txt (which brings ruff and mypy), runs .ci/lint,
    then the README's test command; CONTRIBUTING.md gives the same quick loop and full run."""
    run = (ROOT / ".ci" / "run").read_text()
    order = [run.index(s) for s in ("pip install -q -r requirements-dev.txt", ".ci/lint\n", 'bash -euo pipefail -c "$cmd"')]
    assert order == sorted(order), run
    dev = _read(ROOT / "requirements-dev.txt")
    assert re.search(r"^ruff\b", dev, re.M) and re.search(r"^mypy\b", dev, re.M)
    lint = (ROOT / ".ci" / "lint").read_text()
    assert '"$bin/ruff" check' in lint and '"$bin/mypy"' in lint
    contributing = _read(ROOT / "CONTRIBUTING.md")
    assert '-m "not slow"' in contributing and ".ci/run" in contributing


def test_the_korean_readme_gives_the_same_commands_and_links():
    """docs/README.ko.md has the English README's install commands, walkthrough commands and links."""
    english, korean = (_read(p) for p in READMES)
    blocks = [re.findall(r"```\n(.*?)\n```", text, re.S) for text in (english, korean)]
    assert blocks[0][:2] == blocks[1][:2]
    commands = [re.findall(r"^(sentinel-memory \w+|pipx install \S+ \S+|git \w+|cd .*)", _walkthrough(t), re.M)
                for t in (english, korean)]
    assert commands[0] == commands[1]
    links = [{(p.parent / t).resolve() for t in re.findall(r"\]\(([^)#:]+)\)", _read(p))} for p in READMES]
    assert links[0] - {READMES[1]} == links[1] - {READMES[0]}


def test_the_python_floor_the_docs_give_is_the_packages():
    """README.md, its Korean mirror, CONTRIBUTING.md and design.md name the Python that
    pyproject.toml's requires-python and the start-up check (`__main__.py`) hold to."""
    import tomllib

    from sentinel_memory.__main__ import too_old

    floor = re.fullmatch(r">=(\d+)\.(\d+)", tomllib.loads(_read(ROOT / "pyproject.toml"))["project"]["requires-python"])
    major, minor = int(floor.group(1)), int(floor.group(2))
    assert too_old((major, minor, 0)) is None and too_old((major, minor - 1, 99)) is not None
    quoted = [
        *re.findall(r"Python (\d+\.\d+) or newer", _read(ROOT / "README.md") + _read(ROOT / "CONTRIBUTING.md")),
        *re.findall(r"Python (\d+\.\d+) 이상", _read(READMES[1])),
        *re.findall(r"Python (\d+\.\d+)\+", _read(ROOT / "docs" / "design.md")),
    ]
    assert len(quoted) == 4 and set(quoted) == {f"{major}.{minor}"}, quoted


def test_doc_links_resolve():
    """Every relative link in README and docs points at a file that exists."""
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)#:]+)\)", _read(doc)):
            assert (doc.parent / target).exists(), f"{doc.name} links to missing {target}"


def _walkthrough(text: str) -> str:
    return next(b for b in re.findall(r"```\n(.*?)\n```", text, re.S) if "sentinel-memory init" in b)


def _git(cwd: Path, *args: str, env: dict) -> None:
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, timeout=60)


@pytest.mark.parametrize("readme, rules_dir", [(READMES[0], False), (READMES[0], True), (READMES[1], False)],
                         ids=["README", "README-project-with-cursor-rules-dir", "README.ko"])
def test_the_walkthrough_runs_as_written(readme, rules_dir, tmp_path):
    """The minute with it, pasted into bash in a project with a remote (with or without Cursor's
    .cursor/rules/, where init puts an .mdc instead of .cursorrules), saves the lesson, finds it,
    shows it in git diff as a readable block and pushes it. Only the install (step 0, `pipx
    install`) is stood in for: a `sentinel-memory` on PATH that runs this checkout with the test's
    Python, as `pipx install --editable` gives."""
    home = tmp_path / "home"
    bin_dir = home / ".local" / "bin"
    bin_dir.mkdir(parents=True)
    command = bin_dir / "sentinel-memory"
    command.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{ROOT / "server.py"}" "$@"\n')
    command.chmod(0o755)
    env = {**os.environ, "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1", "NO_COLOR": "1",
           "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
           "GIT_AUTHOR_NAME": "N", "GIT_AUTHOR_EMAIL": "n@example.com",
           "GIT_COMMITTER_NAME": "N", "GIT_COMMITTER_EMAIL": "n@example.com"}
    env.pop("SENTINEL_MEMORY_PROJECT", None)
    remote = tmp_path / "remote.git"
    _git(tmp_path, "init", "-q", "--bare", str(remote), env=env)
    _git(tmp_path, "clone", "-q", str(remote), str(home / "projects" / "my-app"), env=env)
    app = home / "projects" / "my-app"
    (app / "app.py").write_text("print(1)\n")
    if rules_dir:
        (app / ".cursor" / "rules").mkdir(parents=True)
        (app / ".cursor" / "rules" / "style.mdc").write_text("---\nalwaysApply: true\n---\nUse tabs.\n")
    _git(app, "add", ".", env=env)
    _git(app, "commit", "-qm", "first", env=env)
    _git(app, "push", "-q", "origin", "HEAD", env=env)

    script = "\n".join(line for line in _walkthrough(_read(readme)).splitlines() if not line.startswith("pipx install"))
    result = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=home, env=env,
                            capture_output=True, text=True, encoding="utf-8", timeout=120)
    out = result.stdout
    assert result.returncode == 0, out + result.stderr
    assert "saved: new log record" in out and "[FAIL]" not in out
    # the search shows the lesson as what the agent will see: a strong match, not a weak one
    assert "config/tax_rates.yaml" in out and "Nothing matches strongly" not in out, out
    assert re.search(r"^\+\[payment\] log [0-9a-f]{16}$", out, re.M), out  # the readable diff
    assert re.search(r"^payment +1 +0 ", out, re.M), out  # list
    pushed = subprocess.run(["git", "--git-dir", str(remote), "show", "HEAD:.context/memory_log.jsonl"],
                            capture_output=True, text=True, encoding="utf-8", env=env, check=True).stdout
    assert '"topic": "payment"' in pushed
    rules = ".cursor/rules/sentinel-memory.mdc" if rules_dir else ".cursorrules"
    subprocess.run(["git", "--git-dir", str(remote), "cat-file", "-e", f"HEAD:{rules}"], env=env, check=True)


def _slug(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading: lower case, punctuation (§, dots, brackets,
    backticks) dropped, spaces turned into hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", _read(path), flags=re.S)  # a '#' line in a code block is no heading
    seen: dict[str, int] = {}
    anchors = set()
    for heading in re.findall(r"^#{1,6} (.+)$", text, re.M):
        slug = _slug(heading)
        anchors.add(f"{slug}-{seen[slug]}" if seen.get(slug) else slug)
        seen[slug] = seen.get(slug, 0) + 1
    return anchors


def test_the_slugs_are_githubs():
    """The anchors are the ones GitHub makes, so a link that passes here works on the page."""
    assert _slug("§4.2 search_memory(query, topic=None)") == "42-search_memoryquery-topicnone"
    assert _slug("§5.7 The files in `.context/`") == "57-the-files-in-context"
    assert "start-up" in _anchors(ROOT / "docs" / "design.md")


def test_every_section_link_names_a_heading_that_exists():
    """A link to a section (docs/contract.md#42-..., design.md#start-up) lands on a heading of that
    file: renaming a section in the contract breaks the guides that point at it, and this says so."""
    docs = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]
    broken = []
    for doc in docs:
        for target, anchor in re.findall(r"\]\(([^)#:\s]*)#([^)\s]+)\)", _read(doc)):
            path = (doc.parent / target).resolve() if target else doc
            if anchor not in _anchors(path):
                broken.append(f"{doc.name} -> {target}#{anchor}")
    assert not broken, broken


def test_the_guides_leave_the_rules_to_the_contract():
    """tools.md and data-format.md are short guides: each links to the contract's sections for the
    rules instead of restating them."""
    for guide in ("tools.md", "data-format.md"):
        text = _read(ROOT / "docs" / guide)
        assert len(re.findall(r"\(contract\.md#\d", text)) >= 4, guide
        assert len(text.splitlines()) <= 80, f"{guide} grew into a second contract"


def _number(text: str) -> int:
    return int(text.replace(",", ""))


# A number the docs write as a word.
_WORDS = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
          "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a quarter": 0.25, "a half": 0.5, "a third": 1 / 3,
          "a fifth": 0.2, "three quarters": 0.75}


def _quoted(pattern: str, *docs: str) -> list[int]:
    """Every number the pattern's first group captures in the docs named (paths from the root)."""
    return [_number(m.group(1)) for doc in docs for m in re.finditer(pattern, _read(ROOT / doc))]


def _worded(pattern: str, *docs: str) -> list[float]:
    """Every number written as a word (_WORDS) that the pattern's first group captures."""
    return [_WORDS[m.group(1).lower()] for doc in docs for m in re.finditer(pattern, _read(ROOT / doc))]


def test_the_limits_and_thresholds_the_docs_quote_are_the_codes():
    """A limit, threshold or bound quoted in the docs is the constant the code enforces: change one
    and the other must follow (each pattern must still find its quote, so a reworded doc fails too)."""
    from sentinel_memory.cli.maintenance import MIN_PREFIX
    from sentinel_memory.cli.review_flags import MIN_WORDS, NEAR
    from sentinel_memory.cli.review_report import COMMENT_LIMIT, FEW
    from sentinel_memory.git.history import MAX_COMMITS
    from sentinel_memory.hooks import state
    from sentinel_memory.hooks.lessons import CONTEXT_CHARS, PROMPT_RECORDS
    from sentinel_memory.hooks.matches import WARM_FROM
    from sentinel_memory.hooks.run import MAX_INPUT
    from sentinel_memory.record.citations import MAX_FILES, MAX_PATH_BYTES
    from sentinel_memory.record.disk import MAX_FILE_BYTES
    from sentinel_memory.record.records import EARLY_FACTOR, LIMITS
    from sentinel_memory.record.store import LOCK_TIMEOUT, MAX_ROUNDS
    from sentinel_memory.tools.blocks import ECHO_LIMIT
    from sentinel_memory.tools.compaction_answer import STALE_SHOWN
    from sentinel_memory.tools.listing import MATCH_ROOM, MAX_BYTES, MEASURED
    from sentinel_memory.tools.memory import DEFAULT_BUDGET, DEFAULT_THRESHOLD
    from sentinel_memory.tools.render import FOCUS_ANSWER, MISSING_SHOWN, SMALL_ANSWER

    contract, tools, commands = "docs/contract.md", "docs/tools.md", "docs/commands.md"
    checks = [
        (LIMITS["topic"], _quoted(r"\| `topic` \| string \|[^|\n]*at most ([\d,]+) UTF-8 bytes", contract)
        + _quoted(r"`topic` ([\d,]+), `missing_context`", contract)
        + _quoted(r"limits \(([\d,]+) / [\d,]+ / [\d,]+ / [\d,]+ UTF-8 bytes", commands)),
        (LIMITS["missing_context"], _quoted(r"\| `missing_context` \| string \| at most ([\d,]+)", contract)
        + _quoted(r"`missing_context` ([\d,]+), `lesson`", contract)
        + _quoted(r"limits \([\d,]+ / ([\d,]+) / [\d,]+ / [\d,]+ UTF-8 bytes", commands)),
        (LIMITS["lesson"], _quoted(r"\| `lesson` \| string \|[^|\n]*at most ([\d,]+)", contract)
        + _quoted(r"`lesson` ([\d,]+), `ask_next_time`", contract)
        + _quoted(r"limits \([\d,]+ / [\d,]+ / ([\d,]+) / [\d,]+ UTF-8 bytes", commands)),
        (LIMITS["ask_next_time"], _quoted(r"\| `ask_next_time` \| string \|[^|\n]*at most ([\d,]+)", contract)
        + _quoted(r"`ask_next_time` ([\d,]+)\. A value", contract)
        + _quoted(r"limits \([\d,]+ / [\d,]+ / [\d,]+ / ([\d,]+) UTF-8 bytes", commands)
        + _quoted(r"merged, at most ([\d,]+) bytes", contract, tools, "sentinel_memory/tools/compaction_answer.py")
        + _quoted(r"questions \(at most ([\d,]+) bytes\)", "sentinel_memory/tools/compaction_answer.py")
        + _quoted(r"one text of at most ([\d,]+) bytes", "sentinel_memory/setup/cursorrules.md")),
        (MAX_FILES, _quoted(r"\| `files` \| list of strings \|[^|\n]*at most (\d+)", contract)
        + _quoted(r"`files` \(optional, at most (\d+)\)", tools)
        + _quoted(r'refund\.py"\], at most (\d+)\)', "sentinel_memory/setup/cursorrules.md")),
        (DEFAULT_THRESHOLD, _quoted(r"compact_threshold=(\d+)", contract, tools)
        + _quoted(r"past (\d+) logs", tools, "README.md")
        + _quoted(r"more than (\d+) `log` records", "docs/design.md")
        + _quoted(r"more than (\d+) log records", "sentinel_memory/server.py", "sentinel_memory/setup/cursorrules.md")),
        (MAX_BYTES, _quoted(r"([\d,]+) bytes of UTF-8", contract) + _quoted(r"tokens or ([\d,]+) bytes", tools)),
        (DEFAULT_BUDGET, _quoted(r"No answer passes ([\d,]+) estimated tokens", tools)
         + _quoted(r"never more than ([\d,]+) estimated tokens", "docs/design.md")),
        (SMALL_ANSWER, _quoted(r"the whole memory while its answer fits about ([\d,]+) tokens", "docs/design.md")
         + _quoted(r"While the whole scope's answer fits about ([\d,]+) tokens", contract)
         + _quoted(r"While the whole answer fits about ([\d,]+) tokens", tools)),
        (FOCUS_ANSWER, _quoted(r"the matching records up to about ([\d,]+) tokens", "docs/design.md")
         + _quoted(r"until the answer reaches about ([\d,]+) tokens", contract)
         + _quoted(r"the records that match, up to about ([\d,]+) tokens", tools)),
        (MATCH_ROOM, _quoted(r"at least\s+about ([\d,]+) tokens of logs after the principles", contract)),
        (MEASURED, _worded(r"the strong\s+matches among the first (\w+) matching records listed", contract)),
        (DEFAULT_BUDGET, _quoted(r"The budget is ([\d,]+) estimated tokens", contract)),
        (ECHO_LIMIT, _quoted(r"query or topic cut to ([\d,]+) characters", contract)),
        (MISSING_SHOWN, _quoted(r"the missing ones as the caller gave them: the first ([\d,]+),", contract)),
        (STALE_SHOWN, _quoted(r"the reason of its mark \(at most ([\d,]+) listed", contract)),
        (MAX_PATH_BYTES, _quoted(r"A listed path longer than ([\d,]+) UTF-8 bytes", contract)
         + _quoted(r"of at most ([\d,]+) characters that holds a `/`", contract)),
        (EARLY_FACTOR, _quoted(r"a value longer than (\d+) times its byte limit", contract)
         + _quoted(r"A field more than (\d+) times its limit", "docs/security.md")),
        (MAX_COMMITS, _quoted(r"at most the newest ([\d,]+) commits", contract)),
        (MAX_ROUNDS, _quoted(r"It tries at most (\d+) times", contract)),
        (MAX_INPUT >> 20, _quoted(r"it reads at most (\d+) MiB of JSON on stdin", contract)),
        (PROMPT_RECORDS, _quoted(r"at most (\d+) and about [\d,]+ characters", contract)),
        (CONTEXT_CHARS, _quoted(r"at most \d+ and about ([\d,]+) characters", contract)),
        (state.MAX_BYTES >> 10, _quoted(r"at most (\d+) KiB per session", contract)),
        (state.EXPIRES // 86400, _worded(r"removed (\w+) days? after its last change", contract)),
        (state.KEEP_INDEX // 86400, _worded(r"removed (\w+) days after it was built", contract)),
        (COMMENT_LIMIT, _quoted(r"at most ([\d,]+) characters \(a GitHub comment", "docs/design.md")
         + _quoted(r"\(default ([\d,]+), a GitHub comment's limit\)", commands)
         + _quoted(r"within a\s+GitHub comment's ([\d,]+) characters", "docs/team-workflow.md")),
        (FEW, _quoted(r"sections of more than (\d+) records collapsed", "docs/design.md")),
        (NEAR, _worded(r"\| A near-duplicate, in `review` \| (three quarters|a half) of the words", "docs/design.md")),
        (MIN_WORDS, _quoted(r"shared with another record at HEAD, at least (\d+) words", "docs/design.md")),
        (int(LOCK_TIMEOUT), _quoted(r"locked by another process \(after (\d+) s;", commands)
        + _quoted(r"A writer waits (\d+) s", "docs/design.md")),
        (MAX_FILE_BYTES, _quoted(r"over 64 MiB \(([\d,]+) bytes", contract)),
        (MIN_PREFIX, _quoted(r"at least (\d+) characters", commands)),
        (WARM_FROM >> 10, _quoted(r"once the memory file passes (\d+) KiB", "docs/clients.md")
         + _quoted(r"kept only for a memory file of (\d+) KiB or more", contract)
         + _quoted(r"per memory file of (\d+) KiB or more", "docs/design.md")),
    ]
    for value, quoted in checks:
        assert quoted, f"no doc quotes {value} where this test looks: reword the pattern with the doc"
        assert set(quoted) == {value}, f"the docs quote {sorted(set(quoted))} where the code has {value}"


def test_the_match_strength_the_contract_quotes_is_the_codes():
    """Contract §4.2's weights of the order and scale of match strength (the weights, the
    threshold, the bounds) are search/index.py's and search/match.py's: change one and the other
    must follow."""
    from sentinel_memory.search import index, match

    text = _read(ROOT / "docs/contract.md")
    scale = text[text.index("**Match strength.**") : text.index("**What is listed.**")]

    def quoted(pattern: str) -> float:
        found = re.search(pattern, scale, re.S)
        assert found, f"contract §4.2 no longer says {pattern!r}: reword the pattern with the doc"
        return float(found.group(1))

    assert quoted(r"reckoned with `N` at least (\d+)") == match.RARITY_FROM
    assert quoted(r"that it cites \(or the path git renamed to it\): ([\d.]+) \(") == match.FILE
    assert quoted(r"\(([\d.]+) for a file more\s+than a fifth") == match.COMMON_FILE
    assert quoted(r"such weak files\s+together count ([\d.]+) at most") == match.COMMON_FILE
    projects = scale[scale.index("**project file**") : scale.index("PROJECT_FILE")]
    for name in re.findall(r"`([\w.-]+)`", projects):
        assert match.PROJECT_FILE.search(name), f"contract §4.2 calls {name} a project file; search/match.py does not"
    assert quoted(r"when at\s+most (\d+) of the paths the memory cites have that name") == match.NAMED_AMONG
    assert quoted(r"cites another file and no file asked about:\s+([\d.]+) ×") == match.DIRECTORY
    assert quoted(r"not common\) that it holds: ([\d.]+);") == match.IDENTIFIER
    assert quoted(r"as `readme` of `README.md`\): ([\d.]+) ×") == match.TOPIC
    assert quoted(r"strength is at least \*\*([\d.]+)\*\*") == match.STRONG
    assert "halved" in scale and match.WORDS == 2
    assert quoted(r"In a query of more than \*\*(\d+)\*\* words") == match.LONG_QUERY
    assert quoted(r"of those words over (\d+)") == match.LONG_QUERY
    assert "more than a fifth of the records and by more than 5" in text
    assert (index.COMMON, index.COMMON_FLOOR) == (0.2, 5)
    order = text[text.index("**Order.**") : text.index("**Match strength.**")]
    assert "twice when the record's topic holds it" in order and index.TOPIC_WEIGHT == 2
    assert re.search(r"else ([\d.]+) times when the path of a file it cites holds it", order).group(1) == str(
        index.PATH_WEIGHT
    )
    bm25 = re.search(r"`([\d.]+) / \(1 \+ ([\d.]+) × \(([\d.]+) \+ ([\d.]+) × L / avgL\)\)`", order)
    assert bm25, "contract §4.2 no longer gives BM25's length factor as this test reads it"
    assert [float(g) for g in bm25.groups()] == pytest.approx([index.K1 + 1, index.K1, 1 - index.B, index.B])
    days = int(re.search(r"`1 \+ e\^\(-age / (\d+)\)`", order).group(1))
    years = _WORDS[re.search(r"an age past (\w+)\s+years counts as", order).group(1)]
    assert index._RECENCY[days] == pytest.approx(1 + math.exp(-1)) and len(index._RECENCY) == years * 365 + 1
    near = re.search(r"plus (a quarter|a half|a third) of the weights of their directories", order)
    assert near and _WORDS[near.group(1)] == index.DIRECTORY
    assert _WORDS[re.search(r"(\w+) times the nearness plus the score of rule 2", order).group(1)] == index.FILES


def test_the_token_estimate_the_contract_quotes_is_the_codes():
    """Contract §4.6's weights of the token estimate are tools/blocks.py's (in thousandths)."""
    from sentinel_memory.tools import blocks

    text = _read(ROOT / "docs/contract.md")
    found = re.search(
        r"per ASCII character\s+([\d.]+) tokens, plus ([\d.]+) per run of ASCII letters, ([\d.]+) per digit and"
        r" ([\d.]+) per ASCII punctuation\s+mark; ([\d.]+) per Hangul syllable and ([\d.]+) per other non-ASCII",
        text,
    )
    assert found, "contract §4.6 no longer gives the estimate's weights as this test reads them"
    code = [blocks._ASCII, blocks._WORD_RUN, blocks._DIGIT, blocks._PUNCT, blocks._HANGUL, blocks._OTHER]
    assert [round(float(g) * 1000) for g in found.groups()] == code


def test_the_memory_file_example_is_what_the_store_writes():
    """docs/data-format.md's example lines are records as the server writes them: each id is the one
    its text computes (contract §3.4), the keys in the contract's order, the lines sorted by id; the
    ids the other guides show for the same records are those ids."""
    from sentinel_memory.record.records import record_id, to_line

    block = re.search(r"```json\n(.*?)\n```", _read(ROOT / "docs" / "data-format.md"), re.S).group(1)
    lines = block.splitlines()
    records = [json.loads(line) for line in lines]
    assert [to_line(r) for r in records] == lines
    for r in records:
        assert r["id"] == record_id(r["type"], r["topic"], r["missing_context"], r["lesson"]), r["id"]
    assert [r["id"] for r in records] == sorted(r["id"] for r in records)
    principle = next(r for r in records if r["type"] == "principle")
    assert f"#1 {principle['id']} | principle | {principle['topic']} |" in _read(ROOT / "docs" / "tools.md")
    shown = re.search(r"^ *\[(\S+)\] log ([0-9a-f]{16})\n +missing_context: (.*)$", _read(ROOT / "docs" / "team-workflow.md"), re.M)
    assert shown and shown.group(2) == record_id("log", shown.group(1), shown.group(3), ""), "team-workflow.md's diff"


def test_every_tool_parameter_is_described_once_in_the_tools_schema(server_module):
    """The MCP tools' parameters are tools/parameters.py's: the same names, descriptions and defaults.
    (The server module through conftest's fixture, which takes back the FASTMCP_* defaults its
    import puts in os.environ: left there, they would change the fast start's key for every server
    this test process starts later.)"""
    import asyncio

    from fastmcp import Client

    from sentinel_memory.tools.parameters import TOOLS

    async def listed():
        async with Client(server_module.mcp) as client:
            return await client.list_tools()

    listed_tools = {tool.name: tool.input_schema for tool in asyncio.run(listed())}
    assert set(listed_tools) == set(TOOLS)
    for name, parameters in TOOLS.items():
        schema = listed_tools[name]
        assert list(schema["properties"]) == list(parameters), name
        for parameter in parameters.values():
            field = schema["properties"][parameter.name]
            assert field["description"] == parameter.description
            assert (parameter.name in schema.get("required", [])) == parameter.required
            if not parameter.required:
                assert field.get("default") == parameter.default, (name, parameter.name)


# A number with a unit of time, alone or as a range ("~25–40 ms", "1.0 to 2.8 s"; "s" after a
# blank, so that "the 1990s" is none), or a rate
# ("13,247 texts per second", "850 records/s", "0.92–1.22 MB/s"). Not "10,000 records well within
# a second": a bound in words is what a guide may promise.
_NUMBER = r"~?\d[\d,]*(?:\.\d+)?"
_RANGE = rf"{_NUMBER}(?:\s?(?:–|-|to)\s*{_NUMBER})?"
TIMING = re.compile(
    rf"(?<![\w.~-]){_RANGE}(?:\s?(?:ms|µs|ns)|\s(?:s|sec|seconds?|minutes?))\b(?![-/])"
    rf"|(?<![\w.~-]){_RANGE}(?:\s[\w-]+){{0,2}}\s?(?:per (?:second|minute)|/s\b|[KMG]i?B/s)"
)

# Durations a guide may state, by exact phrase: each is a promise, not a measure. The product's
# own bounds are the code's constants (test_the_time_bounds_the_docs_quote_are_the_codes checks
# them); the clients' waits are their documented behaviour, which decides what the server must do.
PROMISED = {
    "docs/commands.md": [
        "locked by another process (after 10 s;",  # store.LOCK_TIMEOUT
        "past about 1 s it prints nothing",  # hooks/run.py DEFAULT_TIME
    ],
    "docs/contract.md": [
        "A writer gives up after 10 seconds",  # store.LOCK_TIMEOUT
        "the lock timeout of §5.1 (10 seconds,",  # store.LOCK_TIMEOUT
        "gone unchanged for 0.25 seconds",  # record/gitlock.py SETTLE
        "longer than 0.25 seconds",  # record/gitlock.py SETTLE
        "past its time bound (about 1 s)",  # hooks/run.py DEFAULT_TIME
    ],
    "docs/design.md": [
        "A writer waits 10 s",  # store.LOCK_TIMEOUT
        "changed in the last 0.25 s",  # record/gitlock.py SETTLE
        "builds its first turn after about 2 s",  # Claude Code's wait for MCP servers
        "Codex gives optional servers about 1 s",  # Codex's mcp_optional_startup_grace_ms
    ],
    "docs/clients.md": [
        "The bound is about 1 s",  # hooks/run.py DEFAULT_TIME
        "waits only about 2 s before it sends",  # Claude Code's wait for MCP servers
        "at most its 5 s connect limit",  # the Claude Agent SDK's alwaysLoad
        "it waits up to 5 s",  # the same
        "(default: 600,000ms = 10\nminutes)",  # quoted from Gemini CLI's documentation
    ],
    "docs/security.md": [
        "timed out after 30 s",  # git/command.py TIMEOUT
    ],
}


def _guides() -> list[Path]:
    """The docs that must not date: all but performance.md (and bench/*.txt and CHANGELOG.md,
    records of the past, which are not here)."""
    docs = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
    return [d for d in docs if d.name != "performance.md"]


def test_no_guide_states_a_timing_or_a_rate():
    """A time or a rate measured on one machine at one commit goes stale with the next change: it
    lives in docs/performance.md with that commit, and a guide says what it means in words and links
    there. Only the durations the product promises, or a client documents, are stated (PROMISED)."""
    found = []
    for doc in _guides():
        text = _read(doc)
        name = doc.relative_to(ROOT).as_posix()
        for phrase in PROMISED.get(name, []):
            assert phrase in text, f"{name} no longer says {phrase!r}: take it out of PROMISED"
            text = text.replace(phrase, "\n" * phrase.count("\n"))  # the lines keep their numbers
        found += [f"{name}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(0)!r}" for m in TIMING.finditer(text)]
    assert not found, "timings or rates outside docs/performance.md:\n" + "\n".join(found)


def test_the_timing_pattern_finds_what_it_is_for():
    """The pattern catches the figures that once stood in the guides and leaves sizes, versions and
    bounds in words alone."""
    dated = ["59 ms against\n286 ms", "within ~25–40 ms of", "took ~170 ms to load", "790 → 25 ms",
             "(0.3–0.4 s from process start", "1.0 to\n2.8 s", "13,247 against 15,107\ntexts per second",
             "(850 against 869 records per second)", "0.92–1.22 MB/s", "8,285–13,339 texts/s", "0.13 ms a text",
             "about\n  6 s of CPU", "15-20 s and more", "1.5 µs"]
    assert [d for d in dated if not TIMING.search(d)] == []
    timeless = ["10,000 records well within a second", "Codex 0.169", "64 MiB (67,108,864 bytes", "4 KB",
                "`%(pw)s`", "1990s", "v1.2", "sha256s", "9,000 estimated tokens", "about one second of grace"]
    assert [t for t in timeless if TIMING.search(t)] == []


def test_the_time_bounds_the_docs_quote_are_the_codes():
    """The durations PROMISED lets the guides state are the code's: the lock timeout, the time git's
    folder must be still, the hook's bound and git's own time limit."""
    from sentinel_memory.git.command import TIMEOUT
    from sentinel_memory.hooks.run import DEFAULT_TIME
    from sentinel_memory.record.gitlock import SETTLE
    from sentinel_memory.record.store import LOCK_TIMEOUT

    def quoted(pattern: str, *docs: str) -> set[float]:
        found = [float(m.group(1)) for doc in docs for m in re.finditer(pattern, _read(ROOT / doc))]
        assert found, f"no doc says {pattern!r}: reword the pattern with the doc"
        return set(found)

    assert quoted(r"A writer gives up after (\d+) seconds", "docs/contract.md") == {LOCK_TIMEOUT}
    assert quoted(r"the lock timeout of §5\.1 \((\d+) seconds,", "docs/contract.md") == {LOCK_TIMEOUT}
    assert quoted(r"(?:unchanged for|longer than) ([\d.]+) seconds", "docs/contract.md") == {SETTLE}
    assert quoted(r"changed in the last ([\d.]+) s\b", "docs/design.md") == {SETTLE}
    assert quoted(r"(?:bound is|past|time bound \() ?about (\d+) s\b", "docs/clients.md", "docs/commands.md",
                  "docs/contract.md") == {DEFAULT_TIME}
    assert quoted(r"timed out after (\d+) s\b", "docs/security.md") == {TIMEOUT}
