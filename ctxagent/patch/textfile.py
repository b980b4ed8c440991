"""Text files as lines, and back to the same bytes.

`TextFile(lines, encoding, newline, final_newline)` writes back the same encoding (BOM
included), the dominant line ending and the final newline state, so an untouched file
round-trips byte for byte (cases P01, P02). NUL bytes: binary, refused (`is_binary`).
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass

from ctxagent.errors import PatchError

CRLF = "\r\n"
LF = "\n"


@dataclass(frozen=True)
class TextFile:
    """A decoded text file. `lines` hold contents without line endings."""

    lines: list[str]
    encoding: str = "utf-8"
    newline: str = LF
    final_newline: bool = True


def is_binary(data: bytes) -> bool:
    """True when `data` contains a NUL byte (binary, or UTF-16/32 text we do not edit)."""
    return b"\x00" in data


def decode_text(data: bytes) -> TextFile:
    """Decode file bytes. Never fails: undecodable UTF-8 falls back to latin-1."""
    encoding = _encoding(data)
    text = data.decode(encoding)
    if not text:
        return TextFile([], encoding, LF, False)
    parts = text.split(LF)
    final_newline = parts[-1] == ""
    if final_newline:
        parts.pop()
    ended = len(parts) if final_newline else len(parts) - 1  # parts followed by "\n"
    crlf = 0
    lines = []
    for i, part in enumerate(parts):
        if i < ended and part.endswith("\r"):
            crlf += 1
            part = part[:-1]
        lines.append(part)
    return TextFile(lines, encoding, _dominant(crlf, ended - crlf, parts, ended), final_newline)


def _encoding(data: bytes) -> str:
    if data.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return "latin-1"
    return "utf-8"


def _dominant(crlf: int, lf: int, parts: list[str], ended: int) -> str:
    if crlf != lf:
        return CRLF if crlf > lf else LF
    if ended and parts[0].endswith("\r"):
        return CRLF
    return LF


def encode_text(file: TextFile, *, path: str | None = None) -> bytes:
    """Bytes of `file`: lines joined by `file.newline`, final newline if set, same encoding.

    Raises PatchError when a line cannot be encoded (e.g. a non-Latin-1 character
    inserted into a Latin-1 file), naming the line.
    """
    text = file.newline.join(file.lines)
    if file.lines and file.final_newline:
        text += file.newline
    try:
        return text.encode(file.encoding)
    except UnicodeEncodeError as exc:
        line_no = text[: exc.start].count(file.newline) + 1
        raise PatchError(
            f"{path or 'file'}: line {line_no} cannot be written in the file's encoding "
            f"({file.encoding}): {exc.reason}; keep to characters that encoding can hold.",
            path=path,
        ) from None
