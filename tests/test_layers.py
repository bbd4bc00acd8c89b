"""The layers hold: every module imports only modules below it in docs/design.md's layer table.

The imports are read from the source (ast), not by importing anything: those at module level and
those inside functions (run when the function runs), each reported as such; imports under
`if TYPE_CHECKING:` serve annotations only and are not run, so they are left out. A module's
parent package, which Python imports first, is not counted as an import of the module.
"""

from __future__ import annotations

import ast
import re
import sys
from functools import cache
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "sentinel_memory"

# Imports from above that the table does not allow yet, each with its reason. Remove an entry as
# soon as the import is gone; test_every_exception_is_still_needed fails while a stale one stays.
EXCEPTIONS: set[tuple[str, str]] = set()

# Run-time import cycles that start-up needs, each named in docs/design.md. None today.
ALLOWED_CYCLES: set[frozenset[str]] = set()

# What the package may import besides the standard library and itself, outside the MCP adapter
# (server.py) and the recorder that imports it: no FastMCP, mcp or pydantic, so git's drivers and
# the commands start fast.
CORE_THIRD_PARTY = {"filelock", "tomlkit"}
FASTMCP_MODULES = {"sentinel_memory.server", "sentinel_memory.faststart.recorder"}


class Import(NamedTuple):
    importer: str
    imported: str
    line: int
    function: str | None  # None: at module level

    def where(self) -> str:
        place = f"in {self.function}()" if self.function else "at module level"
        return f"{self.importer} imports {self.imported} ({place}, line {self.line})"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}
_TREES: dict[Path, ast.Module] = {}


def _tree(path: Path) -> ast.Module:
    if path not in _TREES:
        _TREES[path] = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return _TREES[path]


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _resolve(importer: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = importer.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports_of(name: str, path: Path) -> list[Import]:
    """Every run-time import in the module: the full name of each module it imports."""
    is_package = path.name == "__init__.py"
    found: list[Import] = []

    def visit(node: ast.AST, function: str | None) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                for stmt in child.orelse:
                    visit_stmt(stmt, function)
                continue
            visit_stmt(child, function)

    def visit_stmt(child: ast.AST, function: str | None) -> None:
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            visit(child, function or child.name)
        elif isinstance(child, ast.Import):
            found.extend(Import(name, alias.name, child.lineno, function) for alias in child.names)
        elif isinstance(child, ast.ImportFrom):
            source = _resolve(name, is_package, child)
            for alias in child.names:
                # `from . import render` imports the module sentinel_memory.tools.render
                sub = f"{source}.{alias.name}"
                found.append(Import(name, sub if sub in MODULES else source, child.lineno, function))
        else:
            visit(child, function)

    visit(_tree(path), None)
    return found


@cache
def all_imports() -> tuple[Import, ...]:
    """Every run-time import of every module in the package (read once per test process, when a
    test first asks: collecting the tests parses nothing)."""
    return tuple(i for name, path in MODULES.items() for i in imports_of(name, path))


@cache
def own_imports() -> tuple[Import, ...]:
    """The imports between the package's own modules."""
    return tuple(i for i in all_imports() if i.imported in MODULES)


def layer_table() -> list[tuple[str, list[str]]]:
    """docs/design.md's layer table, top to bottom: (layer, [module, ...]) with full module names."""
    text = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    section = text.split("### Layers", 1)[1].split("\n\n| module |", 1)[1].split("\n\n", 1)[0]
    layers: list[tuple[str, list[str]]] = []
    for row in section.splitlines():
        heading = re.match(r"\| \*\*(.+?)\*\*", row)
        module = re.match(r"\| `([\w/]+)\.py` \|", row)
        if heading:
            layers.append((heading.group(1), []))
        elif module:
            assert layers, f"design.md's layer table lists {module.group(1)} before any layer"
            layers[-1][1].append(module_name(PACKAGE / f"{module.group(1)}.py"))
    return layers


LAYERS = layer_table()
ORDER = {module: (depth, position) for depth, (_, modules) in enumerate(LAYERS)
         for position, module in enumerate(modules)}


def _allowed(i: Import) -> bool:
    """Below: a lower layer (a greater depth), or the same layer and listed after the importer."""
    (depth, position), (other_depth, other_position) = ORDER[i.importer], ORDER[i.imported]
    return other_depth > depth or (other_depth == depth and other_position > position)


def tabled() -> list[Import]:
    """The imports between modules the table places (a module missing from it fails the test below)."""
    return [i for i in own_imports() if i.importer in ORDER and i.imported in ORDER]


def test_the_layer_table_lists_every_module_once():
    """A new module goes into docs/design.md's table, in the layer it belongs to, exactly once."""
    listed = [m for _, modules in LAYERS for m in modules]
    assert len(LAYERS) >= 8, "docs/design.md's layer table was not found or lost its layers"
    assert sorted(set(listed)) == sorted(listed), f"listed twice: {sorted({m for m in listed if listed.count(m) > 1})}"
    assert not set(MODULES) - set(listed), f"not in docs/design.md's layer table: {sorted(set(MODULES) - set(listed))}"
    assert not set(listed) - set(MODULES), f"in the table but not a module: {sorted(set(listed) - set(MODULES))}"


def test_every_module_imports_only_modules_below_it():
    """No import reaches up the table, at module level or in a function, but the named exceptions."""
    upward = [i for i in tabled() if not _allowed(i) and (i.importer, i.imported) not in EXCEPTIONS]
    assert not upward, "imports from above (move the code down or pass what it needs in):\n" + "\n".join(
        i.where() for i in upward)


def test_every_exception_is_still_needed():
    """An exception whose import is gone, or which the table now allows, is taken out of EXCEPTIONS."""
    needed = {(i.importer, i.imported) for i in tabled() if not _allowed(i)}
    assert not EXCEPTIONS - needed, f"no longer needed: {sorted(EXCEPTIONS - needed)}"


def test_the_file_layer_runs_no_git():
    """The memory file's modules and those below them neither import git's modules nor run processes."""
    names = [name for _, modules in LAYERS[[layer for layer, _ in LAYERS].index("the file"):]
             for name in modules]
    assert "sentinel_memory.record.store" in names and "sentinel_memory.git.drivers" not in names
    offending = [i.where() for i in all_imports() if i.importer in names
                 and i.imported in ("subprocess", "sentinel_memory.git.drivers", "sentinel_memory.git.staleness")]
    assert not offending, "\n".join(offending)


def test_the_rooms_import_nothing_but_the_standard_library_filelock_and_tomlkit():
    """Nothing but the MCP adapter imports FastMCP, mcp or pydantic, even inside a function."""
    outside = [i.where() for i in all_imports() if i.importer not in FASTMCP_MODULES
               and i.imported not in MODULES and i.imported.split(".")[0] not in sys.stdlib_module_names
               and i.imported.split(".")[0] not in CORE_THIRD_PARTY]
    assert not outside, "\n".join(outside)


def _loaded_on_import(name: str) -> set[str]:
    """Every module importing `name` runs at module level: its own imports, their parent packages
    (Python runs a package's __init__ first) and theirs, transitively."""
    seen: set[str] = set()
    todo = [name]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        parts = current.split(".")
        todo += [".".join(parts[:n]) for n in range(1, len(parts)) if ".".join(parts[:n]) in MODULES]
        todo += [i.imported for i in all_imports() if i.importer == current and i.function is None]
    return seen


def test_the_entry_point_and_the_fast_start_load_only_the_standard_library():
    """`python server.py` decides, and starts answering the handshake, before anything but the
    standard library is imported: fastmcp comes later, inside a function."""
    for name in ("sentinel_memory.__main__", "sentinel_memory.faststart.proxy"):
        outside = sorted(m for m in _loaded_on_import(name) if m not in MODULES and m != "__future__"
                         and m.split(".")[0] not in sys.stdlib_module_names)
        assert not outside, f"importing {name} loads {outside}"


def test_the_import_walk_follows_parents_and_modules():
    """The check above can fail: importing the MCP adapter loads fastmcp, through core's facade too."""
    loaded = _loaded_on_import("sentinel_memory.server")
    assert "fastmcp" in loaded and "sentinel_memory.record.store" in loaded


def test_the_root_server_py_is_only_a_shim_for_the_entry_point():
    """Client configs name server.py; it holds no logic, only the call into sentinel_memory.__main__,
    after sentinel_memory.interpreter's check that any Python can read (and, before either, a quiet
    Ctrl+C: the interpreter's own _signal, or signal where there is none)."""
    shim = imports_of("server", ROOT / "server.py")
    assert {i.imported for i in shim} == {"os", "sys", "_signal", "signal", "sentinel_memory.interpreter",
                                          "sentinel_memory.__main__"}


def _cycles(edges: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components with more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(edges.get(node, ())):
            if other not in index:
                connect(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    for node in sorted(edges):
        if node not in index:
            connect(node)
    return found


def test_the_cycle_finder_finds_a_cycle():
    """The check below can fail: a ring of three modules is one cycle; a chain is none."""
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [frozenset("abc")]
    assert _cycles({"a": {"b"}, "b": {"c"}}) == []


def test_no_run_time_import_cycles_but_the_named_ones():
    """No two modules import each other, directly or round a ring, at module level or in a function,
    but the cycles start-up needs, each named in docs/design.md."""
    edges: dict[str, set[str]] = {}
    for i in own_imports():
        if i.imported != i.importer:
            edges.setdefault(i.importer, set()).add(i.imported)
    cycles = set(_cycles(edges))
    assert cycles <= ALLOWED_CYCLES, "new import cycles: " + "; ".join(
        " <-> ".join(sorted(c)) for c in cycles - ALLOWED_CYCLES)
    design = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    for cycle in ALLOWED_CYCLES:
        for module in cycle:
            assert f"`{module.removeprefix('sentinel_memory.').replace('.', '/')}.py`" in design


def test_the_imports_are_read_from_both_levels():
    """The parser sees imports inside functions as well as at the top (where the lazy ones hide)."""
    functions = {(i.importer, i.imported) for i in own_imports() if i.function}
    assert ("sentinel_memory.cli.commands", "sentinel_memory.setup.doctor") in functions
    assert ("sentinel_memory.__main__", "sentinel_memory.server") in functions
    top = {(i.importer, i.imported) for i in own_imports() if i.function is None}
    assert ("sentinel_memory.tools.memory", "sentinel_memory.record.store") in top
    # Annotations-only imports are not run: render names memory's results but does not import it.
    assert ("sentinel_memory.tools.render", "sentinel_memory.tools.memory") not in functions | top


# Where each client keeps its MCP config, spelt once: the per-client table. doctor.py spells them
# again (a temporary exception: doctor is to read them from the table, as init does).
CLIENT_TABLE = "sentinel_memory.setup.clients"
CLIENT_TABLE_EXCEPTIONS: set[str] = set()
CLIENT_PATHS = (".cursor", ".vscode", ".mcp.json", ".codex", ".gemini", "mcp_config.json")


def _spells_a_client_path(path: Path) -> bool:
    return any(isinstance(node, ast.Constant) and isinstance(node.value, str)
               and any(node.value == p or node.value.endswith("/" + p) for p in CLIENT_PATHS)
               for node in ast.walk(_tree(path)))


def test_the_clients_config_paths_are_spelt_in_one_table():
    """Each client's config path is written in the per-client table only, so a new client or a moved
    config is one edit."""
    spelling = {name for name, path in MODULES.items() if _spells_a_client_path(path)}
    assert CLIENT_TABLE in spelling
    assert spelling - {CLIENT_TABLE} == CLIENT_TABLE_EXCEPTIONS, (
        f"client config paths spelt outside {CLIENT_TABLE}: {sorted(spelling - {CLIENT_TABLE})}")


ROOMS = {name for name, path in MODULES.items() if path.name == "__init__.py" and name != "sentinel_memory"}


def _room_of(module: str) -> str:
    return next((room for room in ROOMS if module == room or module.startswith(room + ".")), "sentinel_memory")


def test_every_room_is_small_enough_to_walk():
    """A subpackage holds at most about 12 modules, so its name says what a newcomer will find."""
    sizes = {room: sum(1 for m in MODULES if _room_of(m) == room and m != room) for room in ROOMS}
    assert len(ROOMS) >= 6 and all(sizes.values()), sizes
    assert max(sizes.values()) <= 12, sizes


def _underscore_names(node: ast.ImportFrom) -> list[str]:
    return [alias.name for alias in node.names if alias.name.startswith("_") and not alias.name.startswith("__")]


def test_underscore_names_stay_inside_their_room():
    """Another room imports only a room's public names: its `_private` ones are its own to change."""
    crossing = []
    for name, path in MODULES.items():
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.ImportFrom) and _underscore_names(node):
                source = _resolve(name, path.name == "__init__.py", node)
                if source in MODULES and _room_of(source) != _room_of(name):
                    crossing.append(f"{name} imports {_underscore_names(node)} from {source}")
    assert not crossing, "\n".join(crossing)
