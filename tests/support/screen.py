"""A minimal terminal screen for tests: what stays visible after a program's output.

Understands what rich's live displays and spinners write: text, `\\n`, `\\r`, cursor up
(`ESC [ n A`), erase line (`ESC [ n K`), show/hide cursor; other escapes (colours) are
dropped. Lines are not wrapped here: rich wraps before it writes.
"""

from __future__ import annotations

import re

_ESCAPE = re.compile(r"\x1b\[([0-9;?]*)([A-Za-z])|\x1b[()][A-Z0-9]|\x1b[=>]|\x1b\][^\x07]*\x07")


def screen(output: str) -> list[str]:
    """The lines left on the screen by `output` (trailing spaces removed)."""
    lines, row, col = [""], 0, 0
    pos = 0
    for match in [*_ESCAPE.finditer(output), None]:
        end = match.start() if match else len(output)
        for ch in output[pos:end]:
            if ch == "\n":
                row, col = row + 1, 0
                lines.extend([""] * (row + 1 - len(lines)))
            elif ch == "\r":
                col = 0
            else:
                line = lines[row].ljust(col)
                lines[row] = line[:col] + ch + line[col + 1:]
                col += 1
        if match is None:
            break
        pos = match.end()
        args, code = match.group(1) or "", match.group(2)
        if code == "A":
            row = max(0, row - int(args or 1))
        elif code == "K":
            lines[row] = "" if args == "2" else lines[row][:col]
        elif code == "G":
            col = int(args or 1) - 1
    return [line.rstrip() for line in lines]
