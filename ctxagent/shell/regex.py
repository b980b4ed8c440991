"""Where does a regex literal end? Programs disagree when its delimiter sits inside a
bracket expression (`/[/]/`): some end the regex at the first unescaped delimiter, some
(GNU sed 4.9, gawk) skip bracket expressions, and inside brackets a backslash escapes
(gawk) or is literal (POSIX). A script analyser that guesses wrong could take code for
regex text, so sed and awk analysis refuse a regex whose end is in doubt.
"""

from __future__ import annotations


def bracket_open_at_end(body: str) -> bool:
    """True when a bracket expression opened in `body` (a regex up to the first
    unescaped delimiter) may still be open at its end, under either reading of
    backslashes inside brackets: then the delimiter may be inside the brackets."""
    return _open_at_end(body, escapes=True) or _open_at_end(body, escapes=False)


def _open_at_end(body: str, *, escapes: bool) -> bool:
    """True when a bracket expression opened in `body` is still open at its end.

    `escapes`: whether a backslash escapes the next character inside brackets (gawk)
    or is literal there (POSIX)."""
    k = 0
    while k < len(body):
        if body[k] == "\\":
            k += 2
        elif body[k] == "[":
            end = _bracket_end(body, k, escapes=escapes)
            if end is None:
                return True
            k = end
        else:
            k += 1
    return False


def _bracket_end(body: str, k: int, *, escapes: bool) -> int | None:
    """Index after the `]` closing the bracket expression opened at `body[k]`, or None."""
    k += 1
    if body[k : k + 1] == "^":
        k += 1
    if body[k : k + 1] == "]":
        k += 1
    while k < len(body):
        ch = body[k]
        if escapes and ch == "\\":
            k += 2
        elif ch == "[" and body[k + 1 : k + 2] in (":", ".", "="):
            close = body.find(body[k + 1] + "]", k + 2)
            if close < 0:
                return None
            k = close + 2
        elif ch == "]":
            return k + 1
        else:
            k += 1
    return None
