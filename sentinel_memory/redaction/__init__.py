"""Credential redaction: `redact` a text, the `rules_hit` by it, and the `REDACTED` marker. The
rules live in the modules of this package; nothing outside it needs their names."""

from .engine import REDACTED, redact, rules_hit

__all__ = ["REDACTED", "redact", "rules_hit"]
