"""Capping command output in bytes, keeping its head and tail, on character boundaries.

A command may print gigabytes. `HeadTailBuffer` keeps only the first and last `limit`
bytes while counting the total, so memory stays bounded. `cap_output` then cuts the kept
bytes to `limit` (head and tail halves) at UTF-8 character boundaries and puts a marker
with the number of dropped bytes between them. Invalid bytes become U+FFFD, never an
exception (case T07). The DESIGN.md rule: observations are "truncated head + tail, marked".
"""

from __future__ import annotations

MARKER = "\n[... {dropped} bytes of output dropped (kept the first and last parts, limit {limit} bytes) ...]\n"


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

    def render(self, limit: int | None = None) -> str:
        """The capped text (see `cap_output`); `limit` defaults to the buffer's."""
        return cap_output(bytes(self.head), bytes(self.tail), self.total, self.limit if limit is None else limit)


def truncate_output(data: bytes, limit: int) -> str:
    """`data` decoded as UTF-8 (replacement characters for invalid bytes), at most
    `limit` bytes of it kept, head and tail, with a marker saying how many were dropped."""
    return cap_output(data, data, len(data), limit)


def cap_output(head: bytes, tail: bytes, total: int, limit: int) -> str:
    """Render a stream of `total` bytes of which `head` is a prefix and `tail` a suffix,
    each at least min(total, limit) long, in at most `limit` bytes plus the marker.

    The marker counts toward `limit` when `limit` leaves room for it (over ~100 bytes),
    so the result's raw kept bytes plus the marker fit in `limit`.
    """
    if total <= limit:
        return head[:total].decode("utf-8", errors="replace")
    reserve = len(MARKER.format(dropped=total, limit=limit).encode())
    budget = max(limit - reserve, 0) if limit > 2 * reserve else limit
    head_n = _boundary_back(head, min(budget // 2, len(head)))
    tail_n = _tail_length(tail, min(budget - budget // 2, len(tail)))
    dropped = total - head_n - tail_n
    marker = MARKER.format(dropped=dropped, limit=limit)
    tail_part = tail[len(tail) - tail_n :] if tail_n else b""
    return (head[:head_n].decode("utf-8", errors="replace") + marker
            + tail_part.decode("utf-8", errors="replace"))


def _is_continuation(byte: int) -> bool:
    return byte & 0xC0 == 0x80


def _boundary_back(data: bytes, n: int) -> int:
    """Largest cut <= n that does not split a UTF-8 character (moves back <= 3 bytes)."""
    for cut in range(n, max(n - 4, -1), -1):
        if cut == len(data) or cut == 0 or not _is_continuation(data[cut]):
            return cut
    return n


def _tail_length(data: bytes, n: int) -> int:
    """Largest length <= n of a suffix of `data` that starts on a character boundary."""
    for length in range(n, max(n - 4, -1), -1):
        start = len(data) - length
        if length == 0 or not _is_continuation(data[start]):
            return length
    return n
