"""Shared fixtures: the anyio backend, real temp projects, a real `python server.py` over stdio,
and the same server in the test process.

The stdio fixture (`connect`) spawns the server the way Cursor does (the interpreter and the
absolute path of server.py, cwd = the project, a separate HOME) and talks to it with the official
`mcp` SDK client. `forked_connect` talks to the same server over the same real stdio, as a process
forked from an interpreter that has imported it (tests/forkrun.py, serve_command), for the tests
about what a server process does rather than how a new one starts. The in-process fixture
(`inprocess`) serves the same `server.mcp` over fastmcp's in-memory transport: the same MCP
requests, tools, middleware and core calls, without a process start. What depends on the process
(stdin/stdout, the cwd it starts in, exit, stderr) stays on `connect`. Nothing is mocked.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import anyio
import pytest

ROOT = Path(__file__).resolve().parents[1]
SERVER = ROOT / "server.py"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# A shell without job control starts a command run with `&` with Ctrl+C ignored, and an ignored
# signal stays ignored across exec: the servers and commands the tests start would then never see
# the Ctrl+C some tests press. The tests start them as a terminal would, with Ctrl+C's default.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# One call or one spawn must never take this long, even on a busy two-core machine.
CALL_TIMEOUT = 60


def pytest_configure(config):
    """Once per run, before the workers start: the package compiled to bytecode beside its sources,
    as pip compiles an installed one. The tests start hundreds of processes (servers, commands,
    hooks) from this checkout; where PYTHONDONTWRITEBYTECODE is set (or on a fresh clone's first
    imports, all at once) each of them compiled every module it imported again, about a tenth of
    the suite's CPU time (docs/performance.md, "The tests"). __pycache__ is ignored by git."""
    if hasattr(config, "workerinput"):
        return
    import compileall

    compileall.compile_dir(str(ROOT / "sentinel_memory"), quiet=2)


def pytest_xdist_auto_num_workers(config):
    """`-n auto` (the README's command) starts two workers more than there are cores: much of a
    worker's time goes to waiting on the processes its tests start (a server importing fastmcp
    while the test waits, a quiet second after a conversation) and on git's folder settling after
    a commit, which other workers fill (docs/performance.md, "The tests": worker counts).
    PYTEST_XDIST_AUTO_NUM_WORKERS still decides when set."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return cores + 2


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture(scope="session", autouse=True)
def private_cache(tmp_path_factory) -> Path:
    """No test reads or writes the user's cache folder (where the server keeps fastmcp's answers
    for its fast start): every process a test starts inherits XDG_CACHE_HOME set to this session's
    folder, and the stdio fixture passes it on."""
    path = tmp_path_factory.mktemp("xdg-cache")
    os.environ["XDG_CACHE_HOME"] = str(path)
    return path


@pytest.fixture
def home(tmp_path) -> Path:
    """A home directory of its own, so no test sees or touches the real one."""
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def project(tmp_path) -> Path:
    """An empty project directory (not a git work tree)."""
    path = tmp_path / "project"
    path.mkdir()
    return path


@pytest.fixture
def memory_file(project) -> Path:
    return project / ".context" / "memory_log.jsonl"


class Server:
    """A connected MCP session with a one-line way to call a tool."""

    def __init__(self, session, init):
        self.session = session
        self.init = init

    async def call(self, tool: str, **arguments):
        """Call a tool; returns the CallToolResult (`.is_error`, `.content[0].text`)."""
        with anyio.fail_after(CALL_TIMEOUT):
            return await self.session.call_tool(tool, arguments)

    async def ok(self, tool: str, **arguments) -> str:
        """Call a tool that must succeed; returns its text."""
        result = await self.call(tool, **arguments)
        text = result.content[0].text if result.content else ""
        assert not result.is_error, f"{tool} failed: {text}"
        return text

    async def error(self, tool: str, **arguments) -> str:
        """Call a tool that must fail; returns its error text."""
        result = await self.call(tool, **arguments)
        text = result.content[0].text if result.content else ""
        assert result.is_error, f"{tool} unexpectedly succeeded: {text}"
        return text


def _connector(tmp_path: Path, home: Path, forked: bool):
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    import forkrun

    spawned = [0]

    @asynccontextmanager
    async def _connect(cwd: Path, *args: str, env: dict | None = None, **session_options):
        spawned[0] += 1
        environment = {"HOME": str(home), "USERPROFILE": str(home), "XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"],
                       **(env or {})}
        command = forkrun.serve_command(environment) if forked else [sys.executable, str(SERVER)]
        params = StdioServerParameters(command=command[0], args=[*command[1:], *args], cwd=str(cwd), env=environment)
        with open(tmp_path / f"server-{spawned[0]}.stderr", "w", encoding="utf-8") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write, **session_options) as session:
                    with anyio.fail_after(CALL_TIMEOUT):
                        init = await session.initialize()
                    yield Server(session, init)

    return _connect


@pytest.fixture
def connect(tmp_path, home):
    """connect(cwd, *args, env=..., **ClientSession options) -> async context manager yielding a
    Server: `python server.py *args` spawned over real stdio with cwd and a private HOME."""
    return _connector(tmp_path, home, forked=False)


@pytest.fixture
def forked_connect(tmp_path, home):
    """As connect, the server forked from an interpreter that has imported it (tests/forkrun.py,
    serve_command): the same process over the same stdio, with cwd, arguments and environment as
    given, without the new interpreter's start and imports."""
    return _connector(tmp_path, home, forked=True)


class InProcessServer(Server):
    """The same one-line calls on a fastmcp in-memory client session."""

    async def call(self, tool: str, **arguments):
        """Call a tool; returns the protocol's CallToolResult (`.is_error`, `.content[0].text`)."""
        with anyio.fail_after(CALL_TIMEOUT):
            return await self.session.call_tool_mcp(tool, arguments)


@pytest.fixture(scope="session")
def server_module():
    """`import server` in the test process. Importing it does not start the server (that only
    happens under __main__); the FASTMCP_* defaults it puts in os.environ are taken back out, so
    the processes other tests spawn get exactly the environment they had."""
    before = dict(os.environ)
    from sentinel_memory import server

    for key in set(os.environ) - set(before):
        del os.environ[key]
    os.environ.update(before)
    return server


@pytest.fixture
def inprocess(server_module, home):
    """inprocess(project) -> async context manager yielding a Server: a fastmcp client connected
    in memory to `server.mcp`, with the project chosen by SENTINEL_MEMORY_PROJECT and as the cwd,
    and a private HOME, all restored when the block ends."""
    from fastmcp import Client

    @asynccontextmanager
    async def _inprocess(project: Path):
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("SENTINEL_MEMORY_PROJECT", str(project))
            patch.setenv("HOME", str(home))
            patch.setenv("USERPROFILE", str(home))
            patch.chdir(project)
            async with Client(server_module.mcp) as client:
                yield InProcessServer(client, client.initialize_result)

    return _inprocess


def read_lines(path: Path) -> list[dict]:
    """Every line of a memory file as a JSON object; fails if any line is not one."""
    data = path.read_bytes()
    assert data == b"" or data.endswith(b"\n"), "the file must end with a newline"
    records = []
    for number, line in enumerate(data.decode("utf-8").split("\n")[:-1], 1):
        value = json.loads(line)
        assert isinstance(value, dict) and isinstance(value.get("id"), str), f"line {number} is not a record"
        records.append(value)
    return records


@pytest.fixture
def records():
    """records(path) -> the parsed lines of a memory file (every line must be a JSON record)."""
    return read_lines


_HOLDER = textwrap.dedent(
    """
    import sys
    from filelock import FileLock

    lock = FileLock(sys.argv[1])
    lock.acquire()
    print("locked", flush=True)
    sys.stdin.read()  # hold the lock until the test closes our stdin
    lock.release()
    """
)


@contextmanager
def lock_held_elsewhere(memory_file: Path):
    """Another process holds the memory file's lock (the real filelock) until the block ends."""
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(memory_file) + ".lock"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        yield
    finally:
        holder.communicate(input="", timeout=60)


# The quick loop (`pytest -m "not slow"`, CONTRIBUTING.md) leaves out what starts processes or
# takes long; the full run keeps everything. A test is slow when it uses a fixture that starts
# processes, lives in a file that is about processes, or is on the measured list (over ~0.2 s of
# CPU in the quick loop, the test process's and its children's, on a two-core machine: wall-clock
# durations mislead on a shared machine).
SLOW_FIXTURES = {"connect", "forked_connect", "env"}  # a spawned `python server.py`; real git repositories
# Files about processes: every test there starts some (the commands, the server, the wheel build).
SLOW_FILES = {"test_cli.py", "test_cli_hostile.py", "test_clients.py", "test_concurrency.py", "test_fast_start.py", "test_hooks.py", "test_package.py",
              "test_stdio.py"}
SLOW_TESTS = {
    "test_docs.py::test_the_walkthrough_runs_as_written",
    "test_filetext.py::test_edits_give_the_bytes_of_a_full_rewrite_and_never_fall_back",
    "test_hostile.py::test_a_memory_file_that_is_not_a_regular_file_is_refused_at_once_with_exit_3",
    "test_hostile.py::test_a_project_path_with_a_name_too_long_is_a_plain_error",
    "test_hostile.py::test_a_write_that_fails_on_a_full_disk_leaves_no_conflicted_copy_and_no_quarantine_file",
    "test_hostile.py::test_scan_sees_a_key_that_spans_lines_and_redact_removes_it_from_the_quarantine_file",
    "test_hostile.py::test_the_environment_variable_pointing_at_home_or_root_does_not_write_there",
    "test_hostile.py::test_the_merge_driver_keeps_both_sides_when_one_holds_a_nul_byte",
    "test_hostile.py::test_the_merge_driver_keeps_both_sides_when_one_is_over_the_readers_bound",
    "test_hostile.py::test_a_base_over_the_bound_is_left_out_of_the_conflict_so_the_result_can_be_read",
    "test_properties.py::test_a_search_index_derived_after_writes_ranks_as_one_built_afresh",
    "test_properties.py::test_a_spliced_write_equals_a_full_rewrite",
    "test_properties.py::test_round_trip_order_and_limits",
    "test_properties.py::test_search_order_is_a_permutation_with_the_matching_records_first",
    "test_properties.py::test_search_order_is_a_permutation_with_scores_not_increasing",
    "test_properties.py::test_three_way_merge_is_symmetric",
    "test_properties.py::test_upsert_is_idempotent",
    "test_sanitizer.py::test_no_secret_survives_among_other_words",
    "test_sanitizer.py::test_redaction_is_idempotent_on_arbitrary_text",
    "test_sanitizer.py::test_redaction_is_idempotent_when_words_are_glued_together",
    "test_sanitizer.py::test_the_shortcuts_change_no_result",
    "test_sanitizer_forms.py::test_every_text_of_the_external_corpus_is_a_fixed_point_once_redacted",
    "test_sanitizer_nearby.py::test_every_text_of_the_corpora_written_elsewhere_is_a_fixed_point_once_redacted",
    "test_secretscan.py::test_redact_file_waits_for_the_lock_and_gives_up_changing_nothing",
    "test_secretscan.py::test_redacting_while_others_write_loses_no_record",
    "test_store.py::test_a_failed_write_leaves_the_original_byte_for_byte_and_no_debris",
    "test_store.py::test_a_long_run_of_edits_writes_exactly_what_a_full_rewrite_would",
    "test_store.py::test_a_write_holds_the_same_lock_as_filelock",
    "test_store.py::test_lock_timeout_is_a_clear_error_and_changes_nothing",
}


def pytest_collection_modifyitems(config, items):
    for item in items:
        name = getattr(item, "originalname", None) or item.name
        if (SLOW_FIXTURES & set(getattr(item, "fixturenames", ())) or item.path.name in SLOW_FILES
                or f"{item.path.name}::{name}" in SLOW_TESTS):
            item.add_marker(pytest.mark.slow)
