"""Parse the body of one `*** Update File:` section into `Chunk`s. Pure.

Used by `parser.py`; see its module docstring for the grammar and the leniencies.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ctxagent.errors import PatchError
from ctxagent.patch.model import Chunk

END_OF_FILE = "*** End of File"

EXPECTED_FORM = """Expected form:
*** Begin Patch
*** Update File: path/to/file.py
@@ optional line that precedes the change (e.g. def name():)
 unchanged context line
-line to remove
+line to add
*** Add File: path/to/new.txt
+first line of the new file
*** Delete File: path/to/old.txt
*** End Patch"""

# `@@ -12,7 +12,8 @@ def f():` (git style): the text after the second `@@` is the anchor.
_GIT_RANGE = re.compile(r"^-\d+(?:,\d+)?\s+\+\d+(?:,\d+)?\s+@@\s*(.*)$")


@dataclass(frozen=True)
class PatchLine:
    """One patch line (without its line ending) and its 1-based number in the patch text."""

    no: int
    text: str


@dataclass
class _Builder:
    anchor: str | None
    no: int
    items: list[tuple[str, str]] = field(default_factory=list)  # (kind ' '/'-'/'+'/'', text)
    eof: bool = False


def parse_chunks(section: list[PatchLine], path: str) -> list[Chunk]:
    """Turn hunk lines into chunks, in order. Raises PatchError naming the patch line."""
    _reject_file_headers(section, path)
    builders: list[_Builder] = []
    current: _Builder | None = None
    for line in section:
        text = line.text
        if text.startswith("@@"):
            current = _Builder(_anchor(text[2:]), line.no)
            builders.append(current)
        elif text.rstrip() == END_OF_FILE:
            if current is None:
                raise _error(line, path, len(builders) + 1, "'*** End of File' before any hunk line")
            current.eof = True
            current = None
        elif text.startswith("\\"):
            continue  # "\ No newline at end of file", copied from git diffs
        else:
            if current is None:
                if builders:
                    raise _error(line, path, len(builders) + 1, "hunk line after '*** End of File' without a new '@@'")
                current = _Builder(None, line.no)
                builders.append(current)
            current.items.append(_item(line, path, len(builders)))
    return [_finish(b, path, i) for i, b in enumerate(builders, 1)]


def _anchor(rest: str) -> str | None:
    rest = rest.strip()
    git = _GIT_RANGE.match(rest)
    if git:
        rest = git.group(1).strip()
    return rest or None


def _item(line: PatchLine, path: str, hunk: int) -> tuple[str, str]:
    text = line.text
    if text == "":
        return ("", "")
    if text[0] in " +-":
        return (text[0], text[1:])
    raise _error(
        line, path, hunk,
        f"hunk lines must start with ' ' (context), '-' (remove) or '+' (add), found {text[:80]!r}",
    )


def _finish(builder: _Builder, path: str, hunk: int) -> Chunk:
    items = list(builder.items)
    while items and items[-1][0] == "":
        items.pop()  # literally empty trailing lines are only context
    if not any(kind in ("+", "-") for kind, _ in items):
        what = "is empty" if not items else "has no '-' or '+' line (it changes nothing)"
        raise PatchError(
            f"hunk {hunk} of {path} (patch line {builder.no}) {what}.\n{EXPECTED_FORM}",
            path=path, hunk=hunk,
        )
    old = [text for kind, text in items if kind != "+"]
    new = [text for kind, text in items if kind != "-"]
    return Chunk(builder.anchor, old, new, builder.eof)


def _reject_file_headers(section: list[PatchLine], path: str) -> None:
    """`--- a/x` + `+++ b/x` before the first `@@` means a unified diff was pasted in."""
    for first, second in zip(section, section[1:]):
        if first.text.startswith("@@"):
            return
        if first.text.startswith("--- ") and second.text.startswith("+++ "):
            raise PatchError(
                f"line {first.no}: unified diff file headers ('--- ', '+++ ') are not part of "
                f"this format; name the file once with '*** Update File: {path}'.\n{EXPECTED_FORM}",
                path=path, hunk=1,
            )


def _error(line: PatchLine, path: str, hunk: int, what: str) -> PatchError:
    return PatchError(
        f"line {line.no}: {what} (hunk {hunk} of {path}).\n{EXPECTED_FORM}", path=path, hunk=hunk
    )
