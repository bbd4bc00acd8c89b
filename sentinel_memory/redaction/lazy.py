"""Regular expressions compiled on first use. The rules of this package hold a few hundred
patterns; compiling them all when the package is imported would cost every process that imports
it, redacting or not (a command, git's drivers, the pre-commit check), as much as the rest of its
start. `lazy` instead returns a stand-in that compiles its pattern the first time one of its
methods or attributes is read, so a process pays only for the patterns its texts reach: a rule
whose needles or gate a text fails never compiles. The result of every method is the compiled
pattern's own."""

from __future__ import annotations

import re


class LazyPattern:
    """`re.compile(source, flags)` on the first read of an attribute (`search`, `sub`,
    `groupindex`, ...). Each attribute read is then stored on the object itself, so later reads
    find the compiled pattern's bound method at once, as fast as on the pattern."""

    def __init__(self, source: str, flags: int = 0) -> None:
        self._source = source
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None

    def __getattr__(self, name: str) -> object:  # only for a name not yet on the object
        if name.startswith("_"):  # (copy and pickle probe for dunders: no compilation for them)
            raise AttributeError(name)
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = re.compile(self._source, self._flags)
        value = getattr(compiled, name)
        setattr(self, name, value)
        return value

    def __repr__(self) -> str:
        return f"lazy({self._source!r}, {self._flags!r})"


def lazy(source: str, flags: int = 0) -> re.Pattern[str]:
    """A pattern that `re.compile(source, flags)` gives, compiled when first used. Typed as the
    compiled pattern, whose methods and attributes it answers with (it is no instance of it)."""
    return LazyPattern(source, flags)  # type: ignore[return-value]  # (typing costs an import)
