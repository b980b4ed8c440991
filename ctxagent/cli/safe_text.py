"""Text from the model, a tool or a file, made safe to show on a terminal.

`visible()` replaces control characters and bidi overrides with visible escapes (breaker
report F8, CVE-2021-42574); `plain()` / `markup()` keep such text from being read as rich
markup; `safe_json()` escapes the same for JSON. The one place that knows which
characters are unsafe; why: docs/cli.md ("Module notes").
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # rich is imported by the two functions that use it: `ctxagent --help` needs none
    from rich.text import Text

#: C0 controls except \t \n \r, DEL, C1 controls, bidi marks/embeddings/overrides/isolates,
#: Unicode line and paragraph separators; plus a \r that does not end a CRLF line.
_UNSAFE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e"
                     "\u2066-\u2069]|\r(?!\n)")
_NAMED = {"\r": "\\r", "\x0b": "\\v", "\x0c": "\\f", "\x00": "\\0"}
#: Characters JSON leaves raw that a terminal may obey.
_JSON_RAW_UNSAFE = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")

#: The line shown above a preview that holds control characters (approval diffs, `ctxagent apply`).
CONTROL_WARNING = ("warning: this patch contains control characters (shown escaped, e.g. \\x1b); "
                   "the file gets them as written")


def _escape_char(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """`text` with every unsafe character (see the module doc) replaced by a visible
    escape; \\n, \\t, a CRLF line end and all printable text are unchanged. Non-strings
    are converted with `str()` first."""
    if not isinstance(text, str):
        text = str(text)
    return _UNSAFE.sub(_escape_char, text)


def has_controls(text: str) -> bool:
    """True when `visible(text)` would change something (the text holds unsafe characters)."""
    return bool(_UNSAFE.search(text))


def plain(text: str, style: str = "") -> Text:
    """`text` as a rich Text: control characters made visible, never parsed as markup."""
    from rich.text import Text

    return Text(visible(text), style=style)


def markup(text: str) -> str:
    """`text` for use inside a rich markup string: control characters made visible and
    square brackets escaped, so `[bold]` or `[link=...]` in it is shown, not obeyed.
    (Rich still turns emoji codes such as `:smile:` into emoji there; `plain` does not.)"""
    from rich.markup import escape

    return escape(visible(text))


def one_line(text: str) -> str:
    """`visible(text)` on a single line: lines stripped and joined with a space (for
    warnings and error messages whose source text spans lines, e.g. a YAML parser's)."""
    return " ".join(part.strip() for part in visible(text).splitlines() if part.strip())


def safe_json(value: Any, **kwargs: Any) -> str:
    """`json.dumps(value, ensure_ascii=False, **kwargs)` with the characters JSON leaves
    raw but a terminal may obey (C1 controls, DEL, bidi overrides) written as `\\uXXXX`.
    They can only occur inside JSON strings, so the text decodes to the same value."""
    text = json.dumps(value, ensure_ascii=False, **kwargs)
    return _JSON_RAW_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
