"""Regular expressions compiled on first use. The redaction rules hold a few hundred patterns;
compiling them all when the package is imported would cost every process that imports it,
redacting or not (a command, git's drivers, the pre-commit check), as much as the rest of its
start. A class of characters over a wide range of code points (Hangul, CJK) costs a millisecond or
more to compile, and a hook run on an English prompt never reaches it. `lazy` instead returns a stand-in that compiles its pattern the first time one of its
methods or attributes is read, so a process pays only for the patterns its texts reach: a rule
whose needles or gate a text fails never compiles. The result of every method is the compiled
pattern's own."""

from __future__ import annotations

import re

# What a compiled pattern answers with: its methods (search, sub, ...) and attributes (pattern,
# groupindex, ...).
_ATTRIBUTES = tuple(name for name in dir(re.Pattern) if not name.startswith("_"))


class LazyPattern:
    """`re.compile(source, flags)` on the first read of an attribute (`search`, `sub`,
    `groupindex`, ...). The compiled pattern's attributes are then set on the object and it
    becomes a `_Compiled`, which has no `__getattr__`: a later read costs what it costs on any
    object (a class with `__getattr__` is read through a slower path)."""

    def __init__(self, source: str, flags: int = 0) -> None:
        self._source = source
        self._flags = flags

    def __getattr__(self, name: str) -> object:  # only for a name not yet on the object
        if name.startswith("_"):  # (copy and pickle probe for dunders: no compilation for them)
            raise AttributeError(name)
        compiled = re.compile(self._source, self._flags)
        for attribute in _ATTRIBUTES:
            setattr(self, attribute, getattr(compiled, attribute))
        object.__setattr__(self, "__class__", _Compiled)  # (the same layout: a plain object with a __dict__)
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"lazy({self._source!r}, {self._flags!r})"


class _Compiled:
    """A LazyPattern once compiled: its attributes are the compiled pattern's."""

    __repr__ = LazyPattern.__repr__


def lazy(source: str, flags: int = 0) -> re.Pattern[str]:
    """A pattern that `re.compile(source, flags)` gives, compiled when first used. Typed as the
    compiled pattern, whose methods and attributes it answers with (it is no instance of it)."""
    return LazyPattern(source, flags)  # type: ignore[return-value]  # (typing costs an import)
