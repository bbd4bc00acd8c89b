"""How well a memory file that starts with a UTF-16 byte order mark is read (docs/contract.md §3.1,
record/utf16.py): records kept, keys left plain to the rules, notes read as written, and the time
hostile files take. Prints figures; asserts nothing; fetches nothing.

    .venv/bin/python bench/utf16_reading.py [GITDIR ...] [--mixes 3000] [--seed 1] [--hostile-mb 6]
        [--checkout PATH]

  mixes     --mixes files of two to six appends, each PowerShell's (UTF-16 records, notes, notes
            with a fake key, an empty line first) or a UTF-8 tool's (blank lines, short lines in
            several scripts, a record, a note with a key): files that lost a record, that hid a key
  lines     each non-ASCII line of GITDIRs' commit messages (real text in many scripts) alone in a
            PowerShell file, LE and BE, ended by CRLF, LF or nothing: lines read wrong
  sweep     every BMP character between 中 and "ab", a note between two records, LE and BE:
            notes read wrong
  hostile   files of --hostile-mb MiB: 16 KiB non-record lines, short non-record lines, a UTF-8
            and a UTF-16 piece on every line, records each followed by a note (an ordinary
            PowerShell file), `{"id"}` and `x` lines alternating in UTF-16 and in UTF-8 after the
            mark, lines that each hold a NUL before one far UTF-16 line feed; seconds to read
            (snapshot.utf8), beside UTF-8
--checkout runs another checkout's reader (a worktree of an older commit) on the same inputs.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from pathlib import Path

TOKEN = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"  # a fake of the right shape
NOTES = [
    "deploy note",
    "배포 전에 확인",
    "部署说明：先跑测试",
    "Проверить миграции",
    "تحقق من النشر",
    "ตรวจสอบการปรับใช้",
    "ਤੈਨਾਤੀ ਤੋਂ ਪਹਿਲਾਂ",
    "🚀 deploy",
    "ok",
    "上线前检查",
    "é ok",
    "x",
    "デプロイ前に確認",
    "  indented",
    "\ttab",
]
UTF8 = [
    b"\n",
    b"\r\n",
    b"ok\n",
    b"hi\r\n",
    b"note from bash\n",
    "上线\n".encode(),
    "é\n".encode(),
    b"\n\n",
    b"\n\n\n",
    b"abc\n",
    "배포\n".encode(),
    b"a\n",
    b"ab\n",
]


def record(n: int) -> str:
    return json.dumps(
        {
            "id": f"{n:016x}",
            "type": "log",
            "topic": "t",
            "missing_context": "m",
            "lesson": "l",
            "ask_next_time": "",
            "meta": {"created": "2026-01-01T00:00:00+00:00"},
        }
    )


def mixes(snapshot, count: int, seed: int) -> tuple[int, int]:
    """(files that lost a record, files that hid a key) of `count` random mixes."""
    lost = hidden = 0
    for case in range(count):
        rnd = random.Random(seed * 1_000_003 + case)
        codec = rnd.choice(["utf-16-le", "utf-16-be"])
        data, ids, keys = "\ufeff".encode(codec), 0, 0
        for _ in range(rnd.randint(2, 6)):
            if rnd.random() < 0.6:
                lines = [""] if rnd.random() < 0.3 else []
                for _ in range(rnd.randint(1, 3)):
                    pick = rnd.random()
                    if pick < 0.5:
                        ids += 1
                        lines.append(record(ids))
                    else:
                        keys += pick < 0.7
                        lines.append(rnd.choice(NOTES) + (f" {TOKEN}" if pick < 0.7 else ""))
                data += "".join(x + "\r\n" for x in lines).encode(codec)
            elif rnd.random() < 0.5:
                data += rnd.choice(UTF8)
            elif rnd.random() < 0.5:
                ids += 1
                data += (record(ids) + rnd.choice(["\n", "\r\n"])).encode()
            else:
                keys += 1
                data += f"{rnd.choice(NOTES)} {TOKEN}\n".encode()
        snap = snapshot.parse(data)
        lost += len(snap.records) < ids
        hidden += bool(keys) and TOKEN.encode() not in b"\n".join(snap.unreadable)
    return lost, hidden


def real_lines(gitdirs: list[str]) -> list[str]:
    out: dict[str, None] = {}
    for gitdir in gitdirs:
        where, _, rev = gitdir.partition("@")
        log = subprocess.run(
            ["git", "--git-dir", where, "log", "--format=%B", *(rev.split() or ["HEAD"])],
            capture_output=True,
            text=True,
            errors="replace",
        ).stdout
        for line in log.splitlines():
            line = line.rstrip("\r")
            if line.strip() and not line.isascii() and "\ufffd" not in line and not line.lstrip().startswith("{"):
                out[line] = None
    return list(out)


def each_line(snapshot, lines: list[str]) -> dict[str, int]:
    wrong = {}
    for codec in ("utf-16-le", "utf-16-be"):
        for end, name in (("\r\n", "CRLF"), ("\n", "LF"), ("", "none")):
            bad = sum(snapshot.utf8(("\ufeff" + x + end).encode(codec)).rstrip(b"\r\n") != x.encode() for x in lines)
            wrong[f"{codec[-2:].upper()} {name}"] = bad
    return wrong


def sweep(snapshot) -> dict[str, int]:
    a, b = record(1), record(2)
    wrong = {}
    for codec in ("utf-16-le", "utf-16-be"):
        bad = 0
        for cp in range(0x20, 0x10000):
            if 0xD800 <= cp < 0xE000 or cp in (0x85, 0x1C, 0x1D, 0x1E, 0x2028, 0x2029, 0xFEFF):
                continue
            text = "\ufeff" + a + "\r\n" + "中" + chr(cp) + "ab\r\n" + b + "\r\n"
            bad += snapshot.utf8(text.encode(codec)) != text[1:].encode()
        wrong[codec[-2:].upper()] = bad
    return wrong


def hostile(snapshot, mib: int) -> dict[str, float]:
    size = mib << 20
    shapes = {
        "16 KiB lines": "\ufeff".encode("utf-16-le") + (("x" * 8191 + "\n").encode("utf-16-le") * (size // 16384)),
        "short lines": "\ufeff".encode("utf-16-le") + ("note\r\n".encode("utf-16-le") * (size // 12)),
        "a seam a line": "\ufeff".encode("utf-16-le") + ((b"xy\n" + "AB\r\n".encode("utf-16-le")) * (size // 11)),
        "UTF-8, same size": (record(1) + "\n").encode() * (size // 150),
        # ordinary: PowerShell records, each with a note after it (`"note" >> file`)
        "a note a record": "\ufeff".encode("utf-16-le")
        + "".join(f"{record(n)}\r\nnote {n}\r\n" for n in range(size // 400)).encode("utf-16-le"),
        "{id} and x, UTF-16": "\ufeff".encode("utf-16-le") + '{"id"}\r\nx\r\n'.encode("utf-16-le") * (size // 22),
        "{id} and x, UTF-8": "\ufeff".encode("utf-16-le") + b'{"id"}\nx\n' * (size // 9),
        # lines that each hold a NUL, and the one UTF-16 line feed of each alignment at the end
        "x NUL lines": "\ufeff".encode("utf-16-le") + b"x\0\n" * (size // 3) + b"\r\0\n\0z\r\0\n\0",
    }
    out = {}
    for name, data in shapes.items():
        start = time.perf_counter()
        snapshot.utf8(data)
        out[name] = time.perf_counter() - start
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("gitdirs", nargs="*")
    parser.add_argument("--mixes", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--hostile-mb", type=int, default=6)
    parser.add_argument("--checkout", default=str(Path(__file__).resolve().parents[1]))
    args = parser.parse_args()
    sys.path.insert(0, args.checkout)
    import logging

    logging.getLogger("sentinel_memory").addHandler(logging.NullHandler())
    logging.getLogger("sentinel_memory").propagate = False
    from sentinel_memory.record import snapshot

    print(f"reader: {args.checkout}")
    lost, hidden = mixes(snapshot, args.mixes, args.seed)
    print(f"mixes    {args.mixes} files (seed {args.seed}): a record lost {lost}, a key hidden {hidden}")
    if args.gitdirs:
        lines = real_lines(args.gitdirs)
        print(f"lines    {len(lines)} non-ASCII lines alone, read wrong:", each_line(snapshot, lines))
    print("sweep    every BMP character between 中 and ASCII, read wrong:", sweep(snapshot))
    times = hostile(snapshot, args.hostile_mb)
    print(f"hostile  {args.hostile_mb} MiB, seconds:", ", ".join(f"{k} {v:.2f}" for k, v in times.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
