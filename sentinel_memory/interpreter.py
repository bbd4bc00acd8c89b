"""Whether this Python can run the package: one sentence when it is older than the oldest the
package supports (pyproject.toml's requires-python). Any Python parses this module, 2.7 included
(no f-strings, no annotations), so that server.py and __main__.py can say it before they import
what an old interpreter cannot read."""

import sys

OLDEST = (3, 11)  # the package uses 3.11's standard library (tomllib)


def too_old(version=None, executable=None):  # type: (tuple | None, str | None) -> str | None
    """One sentence when this interpreter (or the `version` and `executable` given) is older than
    OLDEST, else None. The venv is made again with --clear: `venv` over an existing one keeps its
    old interpreter."""
    found = tuple(sys.version_info if version is None else version)
    if found[:2] >= OLDEST:
        return None
    return (
        "sentinel-memory: needs Python 3.11 or newer, and %s is Python %s. Make the venv again with a "
        "newer python (python3.11 -m venv --clear .venv) and install into it."
        % (sys.executable if executable is None else executable, ".".join(map(str, found[:3])))
    )
