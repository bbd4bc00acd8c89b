"""Classes of named fields, without dataclasses: a client hook starts a new process on every
prompt and write, and importing dataclasses there loads inspect, ast and dis (10-15 ms) before each
class it builds costs about 1 ms more; the fifteen on a hook's path came to a sixth of its time
(docs/performance.md, "What a hook's start costs").

A class names its fields in __slots__, in order, and sets them in its own __init__; `Value` gives
it what @dataclass gave: equality and a hash by those fields, a repr that shows them (those whose
name starts with an underscore, caches, and those it names in UNSHOWN left out), and the fields by
name (`as_dict`). A class with a field that cannot be hashed (a list, a dict) is compared but not
hashed, as a mutable dataclass was."""

from __future__ import annotations


class Value:
    __slots__: tuple[str, ...] = ()
    UNSHOWN: tuple[str, ...] = ()  # fields the repr leaves out besides the underscored ones (large bytes)

    def _fields(self) -> tuple:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def as_dict(self) -> dict:
        """The fields by name (not copied), as dataclasses.asdict gave them."""
        return {name: getattr(self, name) for name in self.__slots__}

    def __repr__(self) -> str:
        shown = ", ".join(
            f"{name}={getattr(self, name)!r}"
            for name in self.__slots__
            if not name.startswith("_") and name not in self.UNSHOWN
        )
        return f"{type(self).__name__}({shown})"
