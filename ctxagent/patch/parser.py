"""Parse patch text into a `Patch`. Pure: no filesystem access.

The codex `apply_patch` envelope (LF or CRLF), with the leniencies models need (cases
P04a-c); anything else is an error quoting what was found. Grammar and leniencies:
docs/patch.md ("The format", "Module notes").
"""

from __future__ import annotations

import re

from ctxagent.errors import PatchError
from ctxagent.patch.hunks import END_OF_FILE, EXPECTED_FORM, parse_chunks
from ctxagent.patch.hunks import PatchLine as _Line
from ctxagent.patch.model import AddFile, DeleteFile, Operation, Patch, UpdateFile

BEGIN = "*** Begin Patch"
END = "*** End Patch"

_HEADER = re.compile(r"^\*\*\* (Add|Update|Delete) File:\s*(.*)$")
_MOVE = re.compile(r"^\*\*\* Move to:\s*(.*)$")
_FENCE_OPEN = re.compile(r"^\s*```[\w+-]*\s*$")
_FENCE_CLOSE = re.compile(r"^\s*```\s*$")


def parse_patch(text: str) -> Patch:
    """Parse `text` into a `Patch` with at least one operation.

    Raises PatchError (message names the patch line number, what was found and the
    expected form; `.path`/`.hunk` set when the error concerns one file's hunk).
    """
    if not isinstance(text, str):
        raise PatchError(f"patch must be text, got {type(text).__name__}")
    lines = _strip_fence(_split_lines(text))
    ops = _parse_ops(_envelope(lines))
    if not ops:
        raise PatchError(
            "the patch contains no operation (nothing between *** Begin Patch and "
            f"*** End Patch).\n{EXPECTED_FORM}"
        )
    return Patch(ops)


def _split_lines(text: str) -> list[_Line]:
    raw = text.split("\n")
    if raw and raw[-1] == "":
        raw.pop()
    return [_Line(i + 1, s[:-1] if s.endswith("\r") else s) for i, s in enumerate(raw)]


def _strip_fence(lines: list[_Line]) -> list[_Line]:
    """Drop one enclosing Markdown fence: first non-blank line ``` / ```diff / ```patch,
    and the last non-blank line ``` if present."""
    body = [ln for ln in lines if ln.text.strip()]
    if not body or not _FENCE_OPEN.match(body[0].text):
        return lines
    start = lines.index(body[0]) + 1
    end = len(lines)
    if len(body) > 1 and _FENCE_CLOSE.match(body[-1].text):
        end = lines.index(body[-1])
    return lines[start:end]


def _envelope(lines: list[_Line]) -> list[_Line]:
    """Return the lines strictly between `*** Begin Patch` and its `*** End Patch`."""
    begin = _find_begin(lines)
    end = _end_of(lines, begin)
    for k in range(begin + 1, len(lines) if end is None else end):
        if lines[k].text.rstrip() == BEGIN:
            raise PatchError(
                f"line {lines[k].no}: a second '*** Begin Patch' before '*** End Patch'; "
                f"send exactly one patch envelope.\n{EXPECTED_FORM}"
            )
    if end is None:
        raise PatchError(
            "missing '*** End Patch' after '*** Begin Patch' (is the patch truncated?); "
            f"end the patch with a line '*** End Patch'.\n{EXPECTED_FORM}"
        )
    _check_trailer(lines[end + 1:])
    return lines[begin + 1:end]


def _end_of(lines: list[_Line], begin: int) -> int | None:
    """Index of the `*** End Patch` closing the envelope opened at `begin`: the first
    unpadded one, else the last padded one (` *** End Patch`; an earlier padded line may be
    a context line quoting the marker), else None."""
    padded = None
    for k in range(begin + 1, len(lines)):
        text = lines[k].text
        if text.rstrip() == END:
            return k
        if text.strip() == END:
            padded = k
    return padded


def _find_begin(lines: list[_Line]) -> int:
    for k, line in enumerate(lines):
        text = line.text.strip()
        if text == BEGIN:
            return k
        if not text or text == END:
            continue
        raise PatchError(
            f"line {line.no}: found {line.text[:80]!r} before '*** Begin Patch'; the patch "
            f"must start with '*** Begin Patch' (one enclosing ``` fence is allowed)."
            f"{_diff_hint(line.text)}\n{EXPECTED_FORM}"
        )
    raise PatchError(f"no '*** Begin Patch' line found in the patch.\n{EXPECTED_FORM}")


def _diff_hint(text: str) -> str:
    if text.startswith(("--- ", "diff --git", "Index: ")):
        return " This looks like a unified diff; rewrite it in the *** Begin Patch format."
    return ""


def _check_trailer(lines: list[_Line]) -> None:
    for line in lines:
        text = line.text.strip()
        if not text or _FENCE_CLOSE.match(text):
            continue
        what = "a second patch" if text == BEGIN else repr(line.text[:80])
        raise PatchError(
            f"line {line.no}: found {what} after '*** End Patch'; nothing may follow the "
            f"end marker. Send one patch with every operation inside it.\n{EXPECTED_FORM}"
        )


def _parse_ops(body: list[_Line]) -> list[Operation]:
    ops: list[Operation] = []
    k = 0
    while k < len(body):
        line = body[k]
        if not line.text.strip():
            k += 1
            continue
        match = _HEADER.match(line.text.strip())
        if match is None:
            raise PatchError(
                f"line {line.no}: expected an operation header, found {line.text[:80]!r}. "
                "Valid headers: '*** Add File: <path>', '*** Update File: <path>', "
                f"'*** Delete File: <path>'.\n{EXPECTED_FORM}"
            )
        kind, path = match.group(1), _path(match.group(2), line)
        stop = _section_end(body, k + 1, in_update=kind == "Update")
        section = body[k + 1:stop]
        if kind == "Add":
            ops.append(AddFile(path, _add_lines(section, path)))
        elif kind == "Delete":
            _expect_empty(section, path)
            ops.append(DeleteFile(path))
        else:
            ops.append(_parse_update(path, section))
        k = stop
    return ops


def _path(raw: str, line: _Line) -> str:
    path = raw.strip()
    if not path:
        raise PatchError(f"line {line.no}: the operation header names no path: {line.text!r}")
    return path


def _section_end(body: list[_Line], k: int, *, in_update: bool) -> int:
    while k < len(body) and not _is_header(body[k].text, in_update):
        k += 1
    return k


def _is_header(text: str, in_update: bool) -> bool:
    """True when `text` is an operation header, padding ignored; in an update's body a
    line of one space and then non-space text is a context line whatever it says."""
    if in_update and text[:1] == " " and text[1:2] not in (" ", "\t"):
        return False
    return _HEADER.match(text.strip()) is not None


def _add_lines(section: list[_Line], path: str) -> list[str]:
    out: list[str] = []
    blanks = 0
    for line in section:
        if line.text.startswith("+"):
            out.extend([""] * blanks)
            blanks = 0
            out.append(line.text[1:])
        elif not line.text.strip():
            blanks += 1
        else:
            raise PatchError(
                f"line {line.no}: every line of an added file must start with '+', found "
                f"{line.text[:80]!r} in '*** Add File: {path}'.\n{EXPECTED_FORM}",
                path=path,
            )
    return out


def _expect_empty(section: list[_Line], path: str) -> None:
    for line in section:
        if line.text.strip():
            raise PatchError(
                f"line {line.no}: '*** Delete File: {path}' takes no body, found "
                f"{line.text[:80]!r}. To change a file use '*** Update File:'.",
                path=path,
            )


def _parse_update(path: str, section: list[_Line]) -> UpdateFile:
    move_to = None
    moved = _MOVE.match(section[0].text.strip()) if section else None
    if moved is not None:
        move_to = _path(moved.group(1), section[0])
        section = section[1:]
    while section and section[-1].text == "":  # a " " line is empty context: kept
        section = section[:-1]
    if not section:
        if move_to is None:
            raise PatchError(
                f"'*** Update File: {path}' has no hunks; add '@@' hunks of ' '/'-'/'+' "
                f"lines, or '*** Move to: <path>' to rename.\n{EXPECTED_FORM}",
                path=path,
            )
        return UpdateFile(path, move_to)
    if _is_bare_text(section):
        return UpdateFile(path, move_to, replace_lines=[line.text for line in section])
    return UpdateFile(path, move_to, chunks=parse_chunks(section, path))


def _is_bare_text(section: list[_Line]) -> bool:
    """True when the body is the whole new file written without hunk prefixes."""
    texts = [line.text for line in section]
    if any(t.startswith(("@@", "+", "-")) or t.rstrip() == END_OF_FILE for t in texts):
        return False
    return any(t and not t.startswith(" ") for t in texts)
