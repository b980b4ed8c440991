"""Capping command output to its head and tail on character boundaries; control characters shown as escapes.

`HeadTailBuffer` keeps the first and last `limit` bytes; `cap_output` renders them (U+FFFD
for invalid bytes, case T07) within `limit` bytes of returned text, marked, cut on
character boundaries (a CR LF counts as one character);
`escape_controls` makes control characters visible (breaker finding F4; docs/terminal.md);
`looks_binary` tells binary output, which `binary_preview` cuts short.
"""

from __future__ import annotations

import re
from typing import Callable

MARKER = "\n[... {dropped} bytes of output dropped (kept the first and last parts, limit {limit} bytes) ...]\n"

#: Binary output (`looks_binary`) past BINARY_PREVIEW bytes: this note, then its first bytes escaped.
BINARY_NOTE = ("[binary output (a NUL byte in its first 8,000 bytes, the test git and grep use): {total:,} bytes, "
               "the first {kept:,} shown escaped below, {dropped:,} bytes of output dropped; `file PATH` says what "
               "a file is]\n")
BINARY_PROBE = 8000  # bytes looked at, as git's buffer_is_binary does
BINARY_PREVIEW = 256  # bytes of escaped text kept: enough for a magic number, not 60 KB of escapes

_FORMAT_RANGES = ((0x00AD, 0x00AD), (0x0600, 0x0605), (0x061C, 0x061C), (0x06DD, 0x06DD), (0x070F, 0x070F),
                  (0x0890, 0x0891), (0x08E2, 0x08E2), (0x180E, 0x180E), (0x200B, 0x200B), (0x200E, 0x200F),
                  (0x202A, 0x202E), (0x2060, 0x2064), (0x2066, 0x206F), (0xFE00, 0xFE0D), (0xFEFF, 0xFEFF),
                  (0xFFF9, 0xFFFB), (0x110BD, 0x110BD), (0x110CD, 0x110CD), (0x13430, 0x1343F),
                  (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0001, 0xE0001), (0xE0020, 0xE007F),
                  (0xE0100, 0xE01EF))
"""Unicode's format characters (category Cf, Unicode 15) but ZWNJ and ZWJ, and the variation
selectors but VS15/VS16 (emoji): invisible in a terminal, so text in them (tag letters,
"ASCII smuggling") reaches the model unseen by the user (break test 2026-12-02)."""
_CONTROL_CODES = [*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), *range(0x7F, 0xA0),
                  *(code for first, last in _FORMAT_RANGES for code in range(first, last + 1))]
"""C0 controls but tab, newline and CR (handled apart), DEL, C1 controls, the bidirectional
embedding/override/isolate characters ("Trojan Source", CVE-2021-42574) and the rest of
_FORMAT_RANGES."""
_ESCAPES = {code: f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
            for code in _CONTROL_CODES}
_LONE_CR = re.compile("\r(?!\n)")
_ANY_CONTROL = re.compile("[" + "".join(map(chr, _CONTROL_CODES)) + "\r]")
_TRAILING_LINE_ENDS = re.compile("(?:\r?\n)+\\Z")


def escape_controls(text: str) -> str:
    """`text` with each control character written as an escape: `\\x1b` for ESC,
    `\\x00` for NUL, `\\r` for a carriage return not followed by a line feed, `\\u202e`
    for RIGHT-TO-LEFT OVERRIDE, `\\U000e0041` for a tag letter. Tab, newline and CR LF
    line ends stay. A literal backslash is not escaped, so `\\x1b` in a file and an ESC
    byte look the same (like `cat -v`)."""
    if not _ANY_CONTROL.search(text):
        return text  # the common case, without the slower translate
    return _LONE_CR.sub("\\\\r", text).translate(_ESCAPES)


def strip_line_ends(text: str) -> str:
    """`text` without its trailing line ends, a CR LF taken whole: `rstrip("\\n")` would
    leave the CR of a final CR LF raw, a lone CR that `escape_controls` did not escape."""
    return _TRAILING_LINE_ENDS.sub("", text)


def decode(data: bytes) -> str:
    """`data` as UTF-8, each invalid byte as U+FFFD."""
    return data.decode("utf-8", errors="replace")


def decode_escaped(data: bytes) -> str:
    """`decode(data)` with control characters escaped (`escape_controls`)."""
    return escape_controls(decode(data))


def looks_binary(head: bytes) -> bool:
    """Whether output starting with `head` is binary: a NUL byte in its first BINARY_PROBE
    bytes (git's `buffer_is_binary`, grep's default). UTF-16 text counts as binary too."""
    return b"\0" in head[:BINARY_PROBE]


def binary_preview(head: bytes, total: int) -> str:
    """Binary output of `total` bytes (`head` its first bytes): BINARY_NOTE (its size, the bytes
    dropped), then at most BINARY_PREVIEW bytes of its start as escaped text."""
    kept = _fit(head, BINARY_PREVIEW, decode_escaped, from_end=False)
    return BINARY_NOTE.format(total=total, kept=kept, dropped=total - kept) + decode_escaped(head[:kept])


class HeadTailBuffer:
    """The first and last `limit` bytes of a stream, and its total length (bytes)."""

    def __init__(self, limit: int) -> None:
        self.limit = max(limit, 0)
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def feed(self, chunk: bytes) -> None:
        """Add `chunk` (any size)."""
        self.total += len(chunk)
        room = self.limit - len(self.head)
        if room > 0:
            self.head += chunk[:room]
        self.tail += chunk[-self.limit :] if self.limit else b""
        if len(self.tail) > self.limit:
            del self.tail[: len(self.tail) - self.limit]

    def render(self, limit: int | None = None, *, escape: bool = False) -> str:
        """The capped text (see `cap_output`); `limit` defaults to the buffer's."""
        return cap_output(bytes(self.head), bytes(self.tail), self.total,
                          self.limit if limit is None else limit, escape=escape)


def truncate_output(data: bytes, limit: int, *, escape: bool = False) -> str:
    """`data` decoded as UTF-8 (replacement characters for invalid bytes), at most
    `limit` bytes of text kept, head and tail, with a marker saying how many bytes of
    `data` were dropped."""
    return cap_output(data, data, len(data), limit, escape=escape)


def cap_output(head: bytes, tail: bytes, total: int, limit: int, *, escape: bool = False) -> str:
    """Render a stream of `total` bytes (`head` a prefix, `tail` a suffix, each at least min(total, limit) long)
    in at most `limit` bytes of UTF-8 text plus the marker (`escape`: controls escaped, see `escape_controls`).

    The marker counts toward `limit` when `limit` has room for it (over ~100 bytes), so the whole text then
    fits; the marker's count is of bytes of the stream, not of rendered text.
    """
    render = decode_escaped if escape else decode
    if total <= len(head):
        whole = render(head[:total])
        if len(whole.encode()) <= limit:
            return whole
        tail = head[:total]
    reserve = len(MARKER.format(dropped=total, limit=limit).encode())
    budget = max(limit - reserve, 0) if limit > 2 * reserve else limit
    head_n = _fit(head, budget // 2, render, from_end=False)
    tail_n = min(_fit(tail, budget - budget // 2, render, from_end=True), total - head_n)
    tail_n = _tail_length(tail, tail_n)
    marker = MARKER.format(dropped=total - head_n - tail_n, limit=limit)
    tail_part = tail[len(tail) - tail_n :] if tail_n else b""
    return render(head[:head_n]) + marker + render(tail_part)


def _fit(data: bytes, budget: int, render: Callable[[bytes], str], *, from_end: bool) -> int:
    """A large n (a cut on a character boundary) whose prefix (or suffix, `from_end`) of
    `data` renders in at most `budget` bytes. Rendering never shrinks bytes, so n <= budget
    is tried first; when escapes or U+FFFD make the text longer, n shrinks in proportion
    to the overshoot until it fits (a few renders, each strictly smaller)."""
    cut = _tail_length if from_end else _boundary_back
    n = cut(data, min(budget, len(data)))
    while n > 0:
        size = len(render(data[len(data) - n :] if from_end else data[:n]).encode())
        if size <= budget:
            return n
        n = cut(data, min(n * budget // size, n - 1))
    return 0


def _is_continuation(byte: int) -> bool:
    return byte & 0xC0 == 0x80


def _splits_crlf(data: bytes, cut: int) -> bool:
    """Whether cutting `data` before index `cut` separates a CR from its LF."""
    return 0 < cut < len(data) and data[cut - 1] == 0x0D and data[cut] == 0x0A


def _boundary_back(data: bytes, n: int) -> int:
    """Largest cut <= n that splits neither a UTF-8 character (moves back <= 3 bytes) nor
    a CR LF line end (kept whole: a head ending in half of one would show a lone `\\r`)."""
    for cut in range(n, max(n - 4, -1), -1):
        if cut == len(data) or cut == 0 or not _is_continuation(data[cut]):
            return cut - 1 if _splits_crlf(data, cut) else cut
    return n


def _tail_length(data: bytes, n: int) -> int:
    """Largest length <= n of a suffix of `data` that starts on a character boundary and
    not between the CR and the LF of a line end."""
    for length in range(n, max(n - 4, -1), -1):
        start = len(data) - length
        if length == 0 or not _is_continuation(data[start]):
            return length - 1 if _splits_crlf(data, start) else length
    return n
