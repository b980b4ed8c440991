"""Private key blocks printed with line prefixes or suffixes (issue 17, S6), for `ctxagent.redaction`.

After a `-----BEGIN ... PRIVATE KEY-----` line, each following line's base64 tail is key
material (KEY_LINE_MIN, PRELUDE_LINES, GAP_LINES). The rules and their limits:
docs/redaction.md ("Private keys through line prefixes").
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from ctxagent.secret_rules import REDACTED

#: A line tail this long (base64 characters) is a line of key material.
KEY_LINE_MIN = 24
#: Lines after a BEGIN line within which the first key line must come.
PRELUDE_LINES = 10
#: Lines after the last key line within which the next one (or END) must come.
GAP_LINES = 6
#: The label that starts a block (also searched for by `StreamRedactor`).
BEGIN = re.compile(r"-{1,5}BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-{0,5}")  # also cut short (`cut -c 3-`)
END = re.compile(r"-{1,5}END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-{0,5}")
_LINE_END = re.compile(r"\r?\n|(?:\\r)?\\n")
_SUFFIX = r"(?:(?:\^M)?\$|\\r\$?|\\{1,2}|[\"',;)\]]{1,3})?"
_TAIL = re.compile(r"(?:^|(?<=[^A-Za-z0-9+/=\\])|(?<=\\[trnf]))(?P<run>=?[A-Za-z0-9+/]+={0,2})"
                   + _SUFFIX + r"[ \t\r]*\Z")
_BASE64_LIKE = re.compile(r"[0-9+/]")  # a 64-character base64 line lacks them once in 500,000
_HEADER = re.compile(r"(?:Proc-Type|DEK-Info|Version|Comment|Hash|Charset|MessageID): ")
_KEY, _SHORT, _OTHER, _STOP = "key", "short", "other", "stop"


@dataclass(frozen=True)
class _Line:
    start: int  # offset of the line's first character
    end: int    # offset just after its last character (before the line break)
    complete: bool  # a line break follows it


def _lines(text: str, start: int) -> Iterator[_Line]:
    """The lines of `text` from `start`, one at a time (a scan stops after a few)."""
    pos = start
    for m in _LINE_END.finditer(text, start):
        yield _Line(pos, m.start(), True)
        pos = m.end()
    yield _Line(pos, len(text), False)


def _kind(text: str, line: _Line) -> tuple[str, re.Match[str] | None]:
    content = text[line.start:line.end]
    if "PRIVATE KEY" in content and (END.search(content) or BEGIN.search(content)):
        return _STOP, None
    if _HEADER.search(content):
        return _OTHER, None
    tail = _TAIL.search(content)
    if tail is None:
        return _OTHER, None
    run = tail.group("run").strip("=")
    return (_KEY if len(run) >= KEY_LINE_MIN and _BASE64_LIKE.search(run) else _SHORT), tail


@dataclass
class _Block:
    lines: list[_Line]
    kinds: list[tuple[str, re.Match[str] | None]]
    open: bool  # the text ended before the block did (more text may still belong to it)
    ended_by_label: bool


def _scan(text: str, begin_line_end: int) -> _Block:
    """The lines of the block whose BEGIN line ends at `begin_line_end`."""
    candidates = _lines(text, begin_line_end)
    if begin_line_end < len(text):
        next(candidates)  # the empty piece between the BEGIN line and its line break
    lines: list[_Line] = []
    kinds: list[tuple[str, re.Match[str] | None]] = []
    last_key = None
    for n, line in enumerate(candidates):
        kind = _kind(text, line)
        if kind[0] == _STOP:  # a whole label: more text cannot change it
            return _Block(lines, kinds, False, True)
        if kind[0] == _KEY:
            last_key = n
        elif (last_key is None and n >= PRELUDE_LINES) or (last_key is not None and n - last_key > GAP_LINES):
            return _Block(lines, kinds, not line.complete, False)
        lines.append(line)
        kinds.append(kind)
    return _Block(lines, kinds, True, False)


def _spans(block: _Block) -> list[tuple[int, int]]:
    """Offsets of the tails to redact in `block`."""
    names = [k for k, _ in block.kinds]
    if _KEY not in names:
        return []
    out = []
    for n, (kind, tail) in enumerate(block.kinds):
        if tail is None:
            continue
        near = names[max(0, n - 2):n + 3]
        label_near = block.ended_by_label and len(names) - n <= 2
        if kind == _KEY or _KEY in near or label_near:
            start = block.lines[n].start
            out.append((start + tail.start("run"), start + tail.end("run")))
    return out


def redact_key_blocks(text: str) -> str:
    """`text` with the key material of every private key block replaced by REDACTED, through
    any line prefix or suffix (see the module doc). Never raises."""
    if "PRIVATE KEY" not in text:
        return text
    spans: list[tuple[int, int]] = []
    for begin in BEGIN.finditer(text):
        line_end = _LINE_END.search(text, begin.end())
        spans += _spans(_scan(text, line_end.start() if line_end else len(text)))
    if not spans:
        return text
    parts, pos = [], 0
    for start, end in sorted(set(spans)):
        if start >= pos:
            parts += [text[pos:start], REDACTED]
            pos = end
    return "".join(parts) + text[pos:]


def open_block_start(text: str, start: int, end: int) -> int | None:
    """Offset of the first BEGIN label in `text[start:end]` whose block has not ended at
    `end` (more text may still be key material: a stream must hold it back), or None."""
    head = text[:end]
    for begin in BEGIN.finditer(head, start):
        line_end = _LINE_END.search(head, begin.end())
        if _scan(head, line_end.start() if line_end else len(head)).open:
            return begin.start()
    return None
