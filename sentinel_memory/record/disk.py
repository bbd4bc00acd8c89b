"""The risky disk work, in one place: the lock, atomic replace, and the stamp that lets a read
know the file is still the one this process wrote.

Every line that takes a lock, writes a temporary file, fsyncs or calls os.replace is here; the
modules above hand it bytes and paths. A failure raises StorageError or LockTimeout with one
sentence that says what to do, and leaves the target as it was.
"""

from __future__ import annotations

import errno
import os
import stat as stat_
import sys
import time
from contextlib import contextmanager, suppress

from ..errors import LockTimeout, StorageError

WINDOWS = sys.platform == "win32"
Fingerprint = tuple[int, int, int, int]  # (device, inode, size, modification time in ns)
# The largest memory or quarantine file read: ~25,000 records of the largest size, over 100,000
# of a usual one; compaction keeps a real memory far below. A bigger "file" is a mistake or an
# attack (a device, a crafted clone), and reading it would take the process's memory.
MAX_FILE_BYTES = 64 * 1024 * 1024
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


# --------------------------------------------------------------------- reading files of ours


def _refusal(path: str, what: str) -> StorageError:
    return StorageError(
        f"{path} is {what}; Sentinel-Memory reads and writes only regular files of its own in .context/ "
        "(a cloned repository could point them anywhere). Nothing was read or saved; replace it with a "
        "regular file (or move it away) and try again."
    )


def _link_target(path: str) -> str:
    try:
        return os.readlink(path)
    except OSError:
        return "?"


def check_directory(path: str) -> None:
    """Refuse a .context/ that is a symbolic link or not a directory (a missing one is fine)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise StorageError(f"Could not use {path}: {exc.strerror or exc}. Nothing was read or saved.") from exc
    if stat_.S_ISLNK(st.st_mode):
        raise _refusal(path, f"a symbolic link (to {_link_target(path)})")
    if not stat_.S_ISDIR(st.st_mode):
        raise _refusal(path, "not a directory")


def read_regular(path: str, limit: int = MAX_FILE_BYTES) -> bytes | None:
    """The bytes of a regular file of ours, or None when it does not exist. A symbolic link (never
    followed), a directory, a FIFO, a device, or a file over `limit` bytes is refused with a
    StorageError that names it, at once: nothing is read from it."""
    return read_fingerprinted(path, limit)[0]


def read_fingerprinted(path: str, limit: int = MAX_FILE_BYTES) -> tuple[bytes | None, Fingerprint | None]:
    """read_regular's bytes, and the fingerprint the file had just before they were read (None
    with None when it does not exist). Any change to the file after that (git writing the rest of
    it, a file renamed over it) changes the fingerprint: comparing it with fingerprint(path) later
    tells whether the bytes are still the file's."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        if exc.errno == errno.ELOOP or os.path.islink(path):
            raise _refusal(path, f"a symbolic link (to {_link_target(path)})") from None
        if exc.errno == errno.EISDIR:
            raise _refusal(path, "a directory") from None
        raise StorageError(f"Could not read {path}: {exc.strerror or exc}. Check its permissions.") from exc
    try:
        st = os.fstat(fd)
        if not stat_.S_ISREG(st.st_mode):
            kind = (
                "a directory"
                if stat_.S_ISDIR(st.st_mode)
                else "a FIFO"
                if stat_.S_ISFIFO(st.st_mode)
                else "a device"
                if stat_.S_ISCHR(st.st_mode) or stat_.S_ISBLK(st.st_mode)
                else "not a regular file"
            )
            raise _refusal(path, kind)
        if not _NOFOLLOW and os.path.islink(path):  # Windows: no O_NOFOLLOW, so ask after opening
            raise _refusal(path, f"a symbolic link (to {_link_target(path)})")
        if st.st_size > limit:
            raise StorageError(
                f"{path} is {st.st_size:,} bytes, over the {limit:,} that Sentinel-Memory reads. Nothing was read "
                "or saved; if it is really the memory, compact it or split it by hand."
            )
        seen = fingerprint_of(st)
        chunks, left = [], limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if len(data) > limit:  # it grew while being read
            raise StorageError(f"{path} grew past {limit:,} bytes while being read. Nothing was read or saved.")
        return data, seen
    except OSError as exc:
        raise StorageError(f"Could not read {path}: {exc.strerror or exc}. Check its permissions.") from exc
    finally:
        os.close(fd)


# ------------------------------------------------------------------------------------ the lock


@contextmanager
def locked(path: str, timeout: float, told: float | None = None):
    """Hold "<path>.lock" for the block, or raise LockTimeout after `timeout` seconds (the error
    says `told` seconds when given: the whole wait a write was allowed, of which this is the rest).

    It is the lock filelock's FileLock takes on that file, so the two exclude each other. On POSIX
    it is taken straight on the file's descriptor: one flock call on the whole file, the primitive
    FileLock uses there (a FileLock object's bookkeeping costs a sizeable part of a whole write:
    bench/benchmark.py, C; and importing filelock costs a read-only process, such as the client
    hook, a third of its start). Each hold opens its own descriptor, so threads exclude each other
    as processes do. Windows, and a filesystem without flock, keep FileLock: it handles lock files
    that a peer is deleting as it releases, and falls back to a lock file of its own where flock is
    missing."""
    name = f"{path}.lock"
    told = timeout if told is None else told
    fd = None if WINDOWS or name in _NO_FLOCK else _flocked(name, path, timeout, told)
    if fd is None:
        from filelock import FileLock, Timeout

        if os.path.islink(name):  # FileLock would follow it
            raise _refusal(name, f"a symbolic link (to {_link_target(name)})")
        try:
            with FileLock(name, timeout=timeout):
                yield
            return
        except Timeout:
            raise _lock_timeout(path, told) from None
    try:
        yield
    finally:
        os.close(fd)  # closing the descriptor releases its flock


_NO_FLOCK: set[str] = set()  # lock files on filesystems that refused flock


def _flocked(name: str, path: str, timeout: float, told: float) -> int | None:
    """A descriptor of the lock file that holds its flock; None if the filesystem has no flock."""
    deadline, delay = time.monotonic() + timeout, 0.001
    while True:
        try:
            fd = os.open(name, os.O_RDWR | os.O_CREAT | _NOFOLLOW, 0o666)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise _refusal(name, f"a symbolic link (to {_link_target(name)})") from None
            raise StorageError(
                f"Could not open the lock file {name}: {exc.strerror or exc}. Nothing was saved; "
                "check that the .context directory is writable."
            ) from exc
        try:
            while not _try_flock(fd):
                if time.monotonic() >= deadline:
                    raise _lock_timeout(path, told)
                time.sleep(delay)
                delay = min(delay * 2, 0.025)
            if os.fstat(fd).st_nlink:  # else the file was deleted before we locked it: lock the new one
                return fd
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOLCK):
                _NO_FLOCK.add(name)
                return None
            raise
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)


def _try_flock(fd: int) -> bool:
    """One non-blocking flock of the whole file (what FileLock takes on POSIX); False when another
    descriptor holds it. Other failures raise OSError (a filesystem without flock: ENOSYS, ...)."""
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _lock_timeout(path: str, timeout: float) -> LockTimeout:
    return LockTimeout(
        f"The memory file is locked by another process (waited {timeout:g} s for {path}.lock). "
        "Nothing was saved; try again in a moment."
    )


# ------------------------------------------------------------------------------ atomic replace


def atomic_write(
    path: str | os.PathLike,
    data: bytes | list[memoryview],
    mtime_ns: int | None = None,
    durable: bool = True,
    private: bool = False,
) -> os.stat_result:
    """Write data (bytes, or buffers to write one after another) to path so that readers see the
    old bytes or the new ones, never a mix: Staged(...) then commit(). Returns the new file's stat.
    durable=False skips the fsyncs: still atomic for readers, but a crash may leave the old bytes
    (for what may be lost, such as the client hooks' session state in the cache folder).
    private=True: mode 600 whatever the umask and the old file's mode (a cache of ours, read back
    only from a file no one else can write)."""
    staged = Staged(path, data, mtime_ns, durable, private)
    staged.commit()
    return staged.stat


class Staged:
    """A file's new bytes, written and fsynced to a temporary file in the same directory, not yet
    in place. commit() renames it over the target (os.replace) and fsyncs the directory so the
    rename survives a crash; discard() removes it. Staging several files before committing any
    lets a write that fails on one (a full disk) leave every file as it was.

    On failure the temporary file is removed and the target is left as it was; OSErrors become a
    StorageError that says what to do. With mtime_ns the file's modification time is set to it
    (where the platform allows); `stat` is the new file's."""

    def __init__(
        self,
        path: str | os.PathLike,
        data: bytes | list[memoryview],
        mtime_ns: int | None = None,
        durable: bool = True,
        private: bool = False,
    ) -> None:
        self.path = os.fspath(path)
        self.durable = durable
        directory, name = os.path.split(self.path)
        self.directory = directory or "."
        self.tmp: str | None = os.path.join(directory, f".{name}.{os.urandom(4).hex()}.tmp")
        with self._or_discard():
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
            fd = os.open(self.tmp, flags, 0o600 if private else 0o666)
            try:
                _write_all(fd, [data] if isinstance(data, bytes) else data)
                if not private:
                    _keep_mode(fd, self.path)
                if mtime_ns is not None and STAMPS:
                    with suppress(OSError):  # only an optimisation: never a reason to fail the write
                        os.utime(fd, ns=(mtime_ns, mtime_ns))
                if durable:
                    os.fsync(fd)
                self.stat = os.fstat(fd)
            finally:
                os.close(fd)

    def commit(self) -> None:
        with self._or_discard():
            _replace(self.tmp or "", self.path)  # committed once: tmp is set
        self.tmp = None
        if self.durable:
            _fsync_dir(self.directory)

    @contextmanager
    def _or_discard(self):
        """On any failure in the block, remove the temporary file; an OSError becomes a StorageError."""
        try:
            yield
        except OSError as exc:
            self.discard()
            raise _storage_error(self.path, exc) from exc
        except BaseException:
            self.discard()
            raise

    def discard(self) -> None:
        if self.tmp is not None:
            with suppress(OSError):
                os.unlink(self.tmp)
            self.tmp = None


def _keep_mode(fd: int, path: str) -> None:
    """Give the new file the mode of the one it replaces (a memory file a user made private with
    chmod 600 stays so), where the platform has modes."""
    if not hasattr(os, "fchmod"):
        return
    try:
        old = os.lstat(path)
    except OSError:
        return  # a new file: the default mode
    if stat_.S_ISREG(old.st_mode):
        with suppress(OSError):
            os.fchmod(fd, stat_.S_IMODE(old.st_mode))


def _storage_error(path: str, exc: OSError) -> StorageError:
    return StorageError(
        f"Could not write {path}: {exc.strerror or exc}. The file is unchanged and nothing "
        "was saved; free disk space or fix permissions, then try again."
    )


def is_temporary(name: str, stem: str) -> bool:
    """Whether a file name is one of atomic_write's temporary files for a target whose name
    starts with `stem` and a dot."""
    return name.startswith(f".{stem}.") and name.endswith(".tmp")


def _write_all(fd: int, buffers: list) -> None:
    """Write the buffers in order. os.write and os.writev may write less than asked (a signal, a
    full pipe): go on from where they stopped."""
    views = [view for view in (memoryview(buffer) for buffer in buffers) if view.nbytes]
    while views:
        done = os.writev(fd, views[:_IOV_MAX]) if _WRITEV else os.write(fd, views[0])
        if done <= 0:
            raise OSError(errno.EIO, "the disk accepted no bytes")
        while done:
            if done >= views[0].nbytes:
                done -= views.pop(0).nbytes
            else:
                views[0], done = views[0][done:], 0


_WRITEV = hasattr(os, "writev")
_IOV_MAX = 1024  # POSIX's smallest allowed limit on buffers per writev is 16; Linux and macOS allow 1024


def _replace(src: str, dst: str) -> None:
    # On Windows os.replace fails while another process (an editor, an indexer, a reader)
    # has the target open; that passes quickly, so retry for up to about a second.
    delay, deadline = 0.01, time.monotonic() + 1.0
    while True:
        try:
            os.replace(src, dst)
            return
        except PermissionError:
            if not WINDOWS or time.monotonic() > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.1)


def _fsync_dir(directory: str) -> None:
    if WINDOWS:
        return  # directories cannot be opened for fsync on Windows; NTFS journals the rename
    with suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


# ------------------------------------------------------------------- the stamped modification time

# How a read knows, from one stat, that the file is still the one this process wrote. A write sets
# the new file's modification time to a stamp of its own: now, with the digits below the
# microsecond drawn at random (never 000). Any later change to the file (in place, or a new file
# renamed over it, by git, an editor, another process) gets the kernel's clock instead, which
# would have to hit that very nanosecond, with the same size and inode, to go unnoticed. Where
# the stamp cannot be set or does not stick (Windows, a filesystem with coarse times), there is no
# fingerprint and every read compares the file's bytes.
STAMPS = os.utime in os.supports_fd


def stamp() -> int:
    """A modification time (ns) for the next write: now, with random digits below the microsecond."""
    return time.time_ns() // 1000 * 1000 + 1 + int.from_bytes(os.urandom(2), "big") % 999


def stamped_fingerprint(stat: os.stat_result, stamp_ns: int) -> Fingerprint | None:
    """The fingerprint of a file just written with stamp_ns, or None when the stamp did not stick."""
    return (stat.st_dev, stat.st_ino, stat.st_size, stamp_ns) if stat.st_mtime_ns == stamp_ns else None


def fingerprint_of(stat: os.stat_result) -> Fingerprint:
    return stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns


def fingerprint(path: str) -> Fingerprint | None:
    """The file's (device, inode, size, modification time), or None when it cannot be stat'ed."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return fingerprint_of(st)
