"""What redaction changes in text nobody here wrote: the docs, configs and code of public
repositories, cut into paragraphs as a lesson might quote them. Prints how many paragraphs each
checkout's redaction changes and every paragraph the two treat differently; asserts nothing;
fetches nothing.

    .venv/bin/python bench/redaction_realtext.py GITDIR [GITDIR ...] --base CHECKOUT [--new CHECKOUT]

GITDIR is a git directory (a mirror); its HEAD's files ending in one of EXTENSIONS, at most
200,000 bytes each and UTF-8, are split at blank lines into paragraphs of 20 to 1,024 bytes (a
field's limit). Each checkout (a folder holding sentinel_memory/, such as a `git worktree` of an
older commit; --new defaults to this one) redacts every paragraph in a process of its own. A
paragraph only the new code changes is a false positive unless it holds a credential's shape (the
scanners' own test fixtures do); one only the base changes is a credential the new code lets
through, or a false positive it no longer makes.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXTENSIONS = (
    ".md",
    ".rst",
    ".txt",
    ".yml",
    ".yaml",
    ".toml",
    ".cfg",
    ".ini",
    ".env",
    ".sh",
    ".json",
    ".py",
    ".go",
    ".js",
    ".ts",
)
MAX_FILE = 200_000
MIN_PARAGRAPH, MAX_PARAGRAPH = 20, 1024

# Run in the checkout's own interpreter process: its sentinel_memory, one paragraph a line in,
# one line out per paragraph it changes.
_REDACT = """
import json, sys
sys.path.insert(0, sys.argv[1])
from sentinel_memory.redaction.engine import redact
with open(sys.argv[2], encoding="utf-8") as texts, open(sys.argv[3], "w", encoding="utf-8") as out:
    for number, line in enumerate(texts):
        text = json.loads(line)["text"]
        redacted, count = redact(text)
        if count:
            out.write(json.dumps({"line": number, "redacted": redacted}) + "\\n")
"""


def name_of(gitdir: str) -> str:
    path = Path(gitdir).resolve()
    return path.parent.name if path.name in ("repo", ".git") else path.name


def paragraphs(gitdir: str) -> list[dict]:
    listed = (
        subprocess.run(
            ["git", "-C", gitdir, "ls-tree", "-r", "-z", "--name-only", "HEAD"], capture_output=True, check=True
        )
        .stdout.decode("utf-8", "replace")
        .split("\0")
    )
    out = []
    for path in listed:
        if not path.endswith(EXTENSIONS):
            continue
        blob = subprocess.run(["git", "-C", gitdir, "cat-file", "blob", f"HEAD:{path}"], capture_output=True).stdout
        if len(blob) > MAX_FILE:
            continue
        try:
            text = blob.decode("utf-8")
        except UnicodeDecodeError:
            continue
        for paragraph in text.split("\n\n"):
            paragraph = paragraph.strip()
            if MIN_PARAGRAPH <= len(paragraph.encode("utf-8")) <= MAX_PARAGRAPH:
                out.append({"repo": name_of(gitdir), "file": path, "text": paragraph})
    return out


def changed(checkout: Path, texts: Path, out: Path) -> dict[int, str]:
    subprocess.run([sys.executable, "-c", _REDACT, str(checkout), str(texts), str(out)], check=True)
    return {(d := json.loads(line))["line"]: d["redacted"] for line in out.read_text(encoding="utf-8").splitlines()}


def lines_that_differ(a: str, b: str) -> list[tuple[str, str]]:
    return [(x, y) for x, y in zip(a.splitlines(), b.splitlines(), strict=False) if x != y]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("gitdirs", nargs="+")
    parser.add_argument("--base", type=Path, required=True)
    parser.add_argument("--new", type=Path, default=ROOT)
    args = parser.parse_args()
    found = [p for gitdir in args.gitdirs for p in paragraphs(gitdir)]
    with tempfile.TemporaryDirectory() as scratch:
        texts = Path(scratch) / "texts.jsonl"
        texts.write_text("".join(json.dumps(p) + "\n" for p in found), encoding="utf-8")
        base = changed(args.base, texts, Path(scratch) / "base.jsonl")
        new = changed(args.new, texts, Path(scratch) / "new.jsonl")
    print(f"{len(found):,} paragraphs from {len(args.gitdirs)} repositories")
    print(f"changed by the base ({args.base}): {len(base):,}; by the new code ({args.new}): {len(new):,}")
    for title, lines in (
        ("changed only by the new code", sorted(set(new) - set(base))),
        ("changed only by the base", sorted(set(base) - set(new))),
        ("changed by both, differently", sorted(i for i in set(base) & set(new) if base[i] != new[i])),
    ):
        print(f"\n{title}: {len(lines)}")
        for i in lines:
            before = base.get(i, found[i]["text"])
            after = new.get(i, found[i]["text"])
            print(f"  {found[i]['repo']} {found[i]['file']}")
            for x, y in lines_that_differ(before, after):
                print(f"    base: {x[:150]}\n    new:  {y[:150]}")


if __name__ == "__main__":
    main()
