"""The detached builder a hook starts (`hook --warm MEMORY`, hooks/run.py): at low priority, past
the hook's time bound, it keeps in the user's cache folder what a hook could not make in its own
time: the copy of the memory's search index (hooks/matches.py) and the renames of the project's
history at HEAD (hooks/renames.py); `hook --renames MEMORY` the renames alone. Each is kept under a
lock of its own, so builders started by hooks in a row leave at once while one works."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def start(memory: Path, renames_only: bool = False) -> bool:
    """Start `hook --warm` (or `--renames`) for the memory file, detached (it outlives this hook):
    whether it was started."""
    from ..invocation import ENTRY

    kwargs: dict = {"stdin": subprocess.DEVNULL, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    if os.name == "posix":
        kwargs.update(start_new_session=True)  # it lowers its own priority (no preexec_fn: threads run here)
    else:
        kwargs["creationflags"] = getattr(subprocess, "DETACHED_PROCESS", 0) | getattr(
            subprocess, "CREATE_NEW_PROCESS_GROUP", 0
        )
    try:
        subprocess.Popen([*ENTRY, "hook", "--renames" if renames_only else "--warm", os.fspath(memory)], **kwargs)
    except OSError:
        return False
    return True
