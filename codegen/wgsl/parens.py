"""Enclosing parentheses dropped where WGSL reads the same without them (the emitter, the
batched entry and the unrolled loops print through these)."""

from __future__ import annotations

_COMPARISON = (" < ", " <= ", " > ", " >= ")


def _bare(e: str) -> str:
    """Drop one pair of enclosing parentheses where no argument list follows (a whole
    statement, a condition)."""
    if e.startswith("(") and e.endswith(")"):
        depth = 0
        for i, c in enumerate(e):
            depth += c == "("
            depth -= c == ")"
            if depth == 0 and i < len(e) - 1:
                return e
        return e[1:-1]
    return e


def _strip(e: str) -> str:
    """Drop one pair of enclosing parentheses, for readability at statement level and in
    argument lists. A comparison keeps them: WGSL reads `f(a < b, c > d)` as the template
    list `a<b, c>`."""
    return e if any(c in e for c in _COMPARISON) else _bare(e)
