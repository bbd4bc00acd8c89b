"""Soak: writers on one memory file while git works beside them (docs/contract.md §5.8). Prints
figures; asserts nothing.

    nice -n 10 .venv/bin/python bench/git_soak.py [--seconds 90] [--servers 6] [--loggers 2]
                                                  [--no-git] [--code DIR]

In a temporary folder: a bare repository shared by two clones, both wired with
`python server.py --project CLONE init` (the merge driver). In this clone, `--servers` real
`python server.py` processes over stdio (JSON-RPC written and read line by line, as a client does)
and `--loggers` loops of the `log` command write records, each with its own missing_context,
while
  - a killer SIGKILLs a random server or running `log` command every 4-8 s (a killed server is
    started again),
  - the teammate's clone logs a record, commits, pulls and pushes every ~1 s,
  - this clone, every ~1 s in turn: commits and pulls (through the merge driver), checks out an
    older branch and back with `git checkout -m` (which carries the file's changes and so
    rewrites it), stashes and pops.
`--no-git` runs the same writers and kills with no git command at all. `--code DIR` runs the
servers, the commands and the driver of another checkout (e.g. `git worktree add /tmp/before
<commit>`), for a before/after comparison.

At the end the writers stop, this clone commits and pulls once more, and the figures are counted
over the ids written: acknowledged (a server answered saved, or `log` exited 0 with its id),
missing (acknowledged, in neither the memory file nor a stash entry), duplicated (lines beyond
the first for one id in the file), garbled (an acknowledged id whose lesson is not the one sent,
and lines that are not records), and the teammate's pushed records missing. Local only: git over
the filesystem, no network.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ID = re.compile(r"record ([0-9a-f]{16})")
MEMORY = ".context/memory_log.jsonl"
HELLO = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "soak", "version": "0"}}


class Soak:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.code = Path(args.code).resolve() if args.code else ROOT
        self.server = str(self.code / "server.py")
        self.base = Path(tempfile.mkdtemp(prefix="sentinel-soak-"))
        home = self.base / "home"
        home.mkdir()
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "SENTINEL_MEMORY_"))}
        self.env.update(
            HOME=str(home),
            XDG_CACHE_HOME=str(self.base / "cache"),
            XDG_CONFIG_HOME=str(home / ".config"),
            GIT_CONFIG_NOSYSTEM="1",
            GIT_TERMINAL_PROMPT="0",
            GIT_EDITOR="true",
            FASTMCP_CHECK_FOR_UPDATES="off",
            PYTHONUTF8="1",
        )
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.acked: dict[str, str] = {}  # id -> the lesson sent
        self.pushed: set[str] = set()
        self.kills = 0
        self.git_runs: dict[str, list[int]] = {}  # command -> [runs, refused]
        self.running: list[subprocess.Popen] = []  # servers and log commands that may be killed
        self.latencies: list[float] = []  # seconds, of the acknowledged writes
        self.errors: dict[str, int] = {}  # the first words of each error answer -> how many

    # ------------------------------------------------------------------------------- set-up

    def git(self, repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        result = subprocess.run(["git", "-C", str(repo), *args], env=self.env, capture_output=True, text=True)
        if check and result.returncode:
            raise SystemExit(f"git {' '.join(args)} in {repo}: {result.stderr}")
        return result

    def prepare(self) -> None:
        seed = self.base / "seed"
        subprocess.run(["git", "init", "-q", "-b", "main", str(seed)], env=self.env, check=True)
        self.identity(seed)
        self.init(seed)
        server = self.start(seed)
        self.rpc(server, 0, "initialize", HELLO)
        for i in range(200):
            self.log_rpc(server, i + 1, "seed", f"seed {i}")
        server.kill()
        server.wait()
        self.git(seed, "add", "-A")
        self.git(seed, "commit", "-q", "--no-verify", "-m", "seed")
        self.shared = self.base / "shared.git"
        subprocess.run(["git", "clone", "-q", "--bare", str(seed), str(self.shared)], env=self.env, check=True)
        self.ours, self.theirs = self.base / "ours", self.base / "theirs"
        for clone in (self.ours, self.theirs):
            subprocess.run(["git", "clone", "-q", str(self.shared), str(clone)], env=self.env, check=True)
            self.identity(clone)
            self.init(clone)
            self.git(clone, "config", "pull.rebase", "false")
        self.git(self.ours, "branch", "older", "HEAD")

    def identity(self, repo: Path) -> None:
        self.git(repo, "config", "user.name", "Soak")
        self.git(repo, "config", "user.email", "soak@example.com")
        self.git(repo, "config", "commit.gpgsign", "false")

    def init(self, repo: Path) -> None:
        subprocess.run(
            [sys.executable, self.server, "--project", str(repo), "init"], env=self.env, capture_output=True, check=True
        )

    def log_command(self, repo: Path, topic: str, missing: str) -> str | None:
        """One `log` command; its id when it exited 0."""
        lesson = f"lesson of {missing}"
        started = time.monotonic()
        proc = subprocess.Popen(
            [
                sys.executable,
                self.server,
                "--project",
                str(repo),
                "log",
                "--topic",
                topic,
                "--missing-context",
                missing,
                "--lesson",
                lesson,
            ],
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        with self.lock:
            self.running.append(proc)
        out, err = proc.communicate()
        with self.lock:
            self.running.remove(proc)
        found = ID.search(out)
        if proc.returncode == 0 and found:
            with self.lock:
                self.acked[found.group(1)] = lesson
                self.latencies.append(time.monotonic() - started)
            return found.group(1)
        self.failed(f"exit {proc.returncode}: " + (err.strip().splitlines() or [""])[-1])
        return None

    def failed(self, text: str) -> None:
        kind = " ".join(re.sub(r"/\S+", "PATH", text).split()[:8])
        with self.lock:
            self.errors[kind] = self.errors.get(kind, 0) + 1

    # ------------------------------------------------------------------------------ the actors

    def start(self, repo: Path) -> subprocess.Popen:
        return subprocess.Popen(
            [sys.executable, self.server, "--project", str(repo)],
            env=self.env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            bufsize=1,
        )

    def log_rpc(self, proc: subprocess.Popen, n: int, topic: str, missing: str) -> str | None:
        """One log_memory call; its id when the server answered that it saved it."""
        lesson = f"lesson of {missing}"
        started = time.monotonic()
        answer = self.rpc(
            proc,
            n,
            "tools/call",
            {"name": "log_memory", "arguments": {"topic": topic, "missing_context": missing, "lesson": lesson}},
        )
        text = answer.get("result", {}).get("content", [{}])[0].get("text", "")
        found = ID.search(text)
        if answer.get("result", {}).get("isError") or not text.startswith("saved") or not found:
            self.failed(f"error: {text}")
            return None
        with self.lock:
            self.acked[found.group(1)] = lesson
            self.latencies.append(time.monotonic() - started)
        return found.group(1)

    def serve(self, name: str) -> None:
        """A server over stdio, logging record after record; started again when killed."""
        n = 0
        while not self.stop.is_set():
            proc = self.start(self.ours)
            with self.lock:
                self.running.append(proc)
            try:
                self.rpc(proc, 0, "initialize", HELLO)
                while not self.stop.is_set():
                    n += 1
                    self.log_rpc(proc, n, name, f"{name} call {n}")
            except (BrokenPipeError, OSError, EOFError, ValueError):
                pass  # killed
            finally:
                with self.lock:
                    self.running.remove(proc)
                proc.kill()
                proc.wait()

    @staticmethod
    def rpc(proc: subprocess.Popen, rid: int, method: str, params: dict) -> dict:
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}) + "\n")
        if method == "initialize":
            proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
        while True:
            line = proc.stdout.readline()
            if not line:
                raise EOFError
            message = json.loads(line)
            if message.get("id") == rid:
                return message

    def logger(self, name: str) -> None:
        n = 0
        while not self.stop.is_set():
            n += 1
            self.log_command(self.ours, name, f"{name} run {n}")

    def killer(self) -> None:
        while not self.stop.wait(random.uniform(4, 8)):
            with self.lock:
                victims = [p for p in self.running if p.poll() is None]
            if victims:
                victim = random.choice(victims)
                try:
                    os.kill(victim.pid, signal.SIGKILL)
                    self.kills += 1
                except ProcessLookupError:
                    pass

    def counted(self, name: str, result: subprocess.CompletedProcess) -> None:
        runs = self.git_runs.setdefault(name, [0, 0])
        runs[0] += 1
        runs[1] += result.returncode != 0

    def teammate(self) -> None:
        """The other clone: a server of its own (never killed) logs a record, then commit, pull, push."""
        server = self.start(self.theirs)
        self.rpc(server, 0, "initialize", HELLO)
        n = 0
        while not self.stop.wait(1.0):
            n += 1
            rid = self.log_rpc(server, n, "teammate", f"teammate {n}")
            self.git(self.theirs, "add", "-A")
            self.git(self.theirs, "commit", "-q", "--no-verify", "-m", f"teammate {n}", check=False)
            self.git(self.theirs, "pull", "-q", "--no-edit", check=False)
            if self.git(self.theirs, "push", "-q", check=False).returncode == 0 and rid:
                self.pushed.add(rid)
        server.kill()
        server.wait()

    def this_clone(self) -> None:
        steps = ["pull", "checkout", "stash"]
        i = 0
        while not self.stop.wait(1.0):
            step = steps[i % len(steps)]
            i += 1
            if step == "pull":
                self.git(self.ours, "add", "-A")
                self.git(self.ours, "commit", "-q", "--no-verify", "-m", f"ours {i}", check=False)
                self.counted("pull", self.git(self.ours, "pull", "-q", "--no-edit", check=False))
            elif step == "checkout":
                self.counted("checkout -m", self.git(self.ours, "checkout", "-q", "-m", "older", check=False))
                self.counted("checkout -m back", self.git(self.ours, "checkout", "-q", "-m", "main", check=False))
            else:
                self.counted("stash", self.git(self.ours, "stash", "-q", check=False))
                self.counted("stash pop", self.git(self.ours, "stash", "pop", "-q", check=False))

    # --------------------------------------------------------------------------------- the run

    def run(self) -> None:
        self.prepare()
        actors = [threading.Thread(target=self.serve, args=(f"server{k}",)) for k in range(self.args.servers)]
        actors += [threading.Thread(target=self.logger, args=(f"logger{k}",)) for k in range(self.args.loggers)]
        actors.append(threading.Thread(target=self.killer))
        if not self.args.no_git:
            actors += [threading.Thread(target=self.teammate), threading.Thread(target=self.this_clone)]
        started = time.monotonic()
        for actor in actors:
            actor.start()
        self.stop.wait(self.args.seconds)
        self.stop.set()
        for actor in actors:
            actor.join()
        elapsed = time.monotonic() - started
        if self.git(self.ours, "rev-parse", "--abbrev-ref", "HEAD").stdout.strip() != "main":
            self.git(self.ours, "checkout", "-q", "-m", "main", check=False)
        if not self.args.no_git:
            self.git(self.ours, "add", "-A")
            self.git(self.ours, "commit", "-q", "--no-verify", "-m", "last", check=False)
            self.git(self.ours, "pull", "-q", "--no-edit", check=False)
        self.report(elapsed)

    def report(self, elapsed: float) -> None:
        data = (self.ours / MEMORY).read_bytes()
        lines, garbled_lines = {}, 0
        seen: dict[str, int] = {}
        for raw in data.splitlines():
            try:
                record = json.loads(raw)
                rid = record["id"]
            except (ValueError, KeyError, TypeError):
                garbled_lines += 1
                continue
            seen[rid] = seen.get(rid, 0) + 1
            lines[rid] = record
        stashed: set[str] = set()
        for ref in self.git(self.ours, "stash", "list", "--format=%H").stdout.split():
            shown = self.git(self.ours, "show", f"{ref}:{MEMORY}", check=False).stdout
            stashed |= {json.loads(line)["id"] for line in shown.splitlines() if line.startswith("{")}
        present = set(lines) | stashed
        missing = [rid for rid in self.acked if rid not in present]
        garbled = [rid for rid, lesson in self.acked.items() if rid in lines and lines[rid].get("lesson") != lesson]
        quarantine = self.ours / ".context" / "memory_log.quarantine.jsonl"
        print(
            f"code: {self.code} ({self.head()})  git: {'no' if self.args.no_git else 'yes'}  "
            f"{elapsed:.0f} s, {self.args.servers} servers, {self.args.loggers} loggers, {self.kills} SIGKILLs"
        )
        print(
            f"  acknowledged {len(self.acked)}, missing {len(missing)}, duplicated "
            f"{sum(c - 1 for c in seen.values())}, garbled {len(garbled)} (+{garbled_lines} lines not records), "
            f"in stash entries only {len(stashed - set(lines))}"
        )
        if not self.args.no_git:
            print(
                f"  teammate pushed {len(self.pushed)}, missing {len(self.pushed - present)}; git runs "
                + ", ".join(f"{k} {v[0]} ({v[1]} refused)" for k, v in self.git_runs.items())
            )
        waits = sorted(self.latencies[200:]) or [0.0]  # the 200 seed writes first
        print(
            f"  acknowledged write latency: median {waits[len(waits) // 2] * 1000:.0f} ms, p95 "
            f"{waits[int(len(waits) * 0.95)] * 1000:.0f} ms, max {waits[-1] * 1000:.0f} ms; not saved: "
            + (", ".join(f"{v} x {k!r}" for k, v in sorted(self.errors.items(), key=lambda kv: -kv[1])) or "none")
        )
        print(
            f"  records in the file {len(lines)}; quarantine file "
            f"{len(quarantine.read_bytes().splitlines()) if quarantine.exists() else 0} lines"
        )

    def head(self) -> str:
        return subprocess.run(
            ["git", "-C", str(self.code), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        ).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=90)
    parser.add_argument("--servers", type=int, default=6)
    parser.add_argument("--loggers", type=int, default=2)
    parser.add_argument("--no-git", action="store_true", help="the same writers and kills, no git command")
    parser.add_argument("--code", help="the checkout whose server.py runs (default: this one)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args()
    soak = Soak(args)
    try:
        soak.run()
    finally:
        if not args.keep:
            shutil.rmtree(soak.base, ignore_errors=True)
        else:
            print(f"  kept: {soak.base}")


if __name__ == "__main__":
    main()
