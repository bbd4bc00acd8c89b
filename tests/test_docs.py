"""The docs keep up with the product: every tool and every command is documented."""

import re
from pathlib import Path

from core.cli import COMMANDS

ROOT = Path(__file__).resolve().parents[1]
TOOLS = ("search_memory", "log_memory", "compact_memory")


def test_every_command_is_in_the_command_reference():
    """docs/commands.md has a row for every command the CLI accepts."""
    text = (ROOT / "docs" / "commands.md").read_text(encoding="utf-8")
    missing = [c for c in COMMANDS if f"| `{c}" not in text]
    assert not missing, f"undocumented commands: {missing}"


def test_every_tool_is_documented_and_registered():
    """Each MCP tool the server defines is described in docs/tools.md and the README."""
    server = (ROOT / "server.py").read_text(encoding="utf-8")
    defined = set(re.findall(r"^async def (\w+_memory)\(", server, re.M))
    assert defined == set(TOOLS)
    for doc in ("docs/tools.md", "README.md", "docs/README.ko.md", ".cursorrules"):
        text = (ROOT / doc).read_text(encoding="utf-8")
        assert all(t in text for t in TOOLS), doc


def test_readme_opens_with_the_serve_and_test_commands_that_ci_runs():
    """README's first two code blocks install+serve and install+test; .ci/run runs the test block."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```\n(.*?)\n```", readme, re.S)
    assert "server.py" in blocks[0] and "requirements.txt" in blocks[0]
    assert "pytest" in blocks[1] and "requirements-dev.txt" in blocks[1]
    assert "<!-- test -->" in (ROOT / ".ci" / "run").read_text()


def test_doc_links_resolve():
    """Every relative link in README and docs points at a file that exists."""
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)#:]+)\)", doc.read_text(encoding="utf-8")):
            assert (doc.parent / target).exists(), f"{doc.name} links to missing {target}"
