"""Literal candidate search: which files contain the query text, and on which lines.

ripgrep when installed, else a pure-Python scan with the same answer; fixed string,
case-insensitive, a multi-line query by its longest line. The query is data, never an
rg option; `--no-ignore` keeps rg off ignore files (issue 17 S9). docs/context-fetch.md.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from ctxagent.fetch.walk import EXCLUDED_DIRS, MAX_FILE_BYTES, glob_match, list_files, read_text
from ctxagent.shell import programs

#: Most matching lines kept per file; longest line text kept (characters).
MAX_LINES_PER_FILE = 20
MAX_LINE_CHARS = 400
RG_TIMEOUT_S = 10.0


@dataclass
class LiteralHits:
    """Matching lines by workspace-relative path: {rel: [(line number, 1-based; text)]}.

    `engine` is "rg" or "python"; `pattern` the string searched ("" when the query has
    no searchable line).
    """

    engine: str
    pattern: str
    lines: dict[str, list[tuple[int, str]]] = field(default_factory=dict)


def literal_pattern(query: str) -> str:
    """The string searched for `query`: its longest non-blank line, stripped."""
    lines = [line.strip() for line in query.splitlines() if line.strip()]
    return max(lines, key=len) if lines else ""


def find_rg() -> str | None:
    """Path of the ripgrep binary, or None when it is not installed (ctxagent's own
    environment first, then SAFE_PATH; never the user's PATH: issue 17 S4)."""
    return programs.find_rg()


def search_literal(root: Path, query: str, *, glob: str | None = None, rg: str | None = None) -> LiteralHits:
    """Lines of files under `root` containing `query` (see the module doc).

    `rg`: the ripgrep binary to use, or None for the pure-Python scan. If rg fails to
    run, the Python scan answers instead (its `engine` says so).
    """
    pattern = literal_pattern(query)
    if not pattern:
        return LiteralHits("python" if rg is None else "rg", "")
    if rg is not None:
        found = _search_rg(rg, root, pattern, glob)
        if found is not None:
            return LiteralHits("rg", pattern, found)
    return LiteralHits("python", pattern, _search_python(root, pattern, glob))


def rg_argv(rg: str, pattern: str, glob: str | None) -> list[str]:
    """The ripgrep command line (a list: never passed through a shell)."""
    argv = [rg, "--no-config", "--fixed-strings", "--ignore-case", "--line-number", "--no-heading",
            "--with-filename", "--null", "--color=never", "--no-ignore", "--no-messages",
            f"--max-filesize={MAX_FILE_BYTES}", f"--max-count={MAX_LINES_PER_FILE}"]
    argv += [f"--glob=!{name}/" for name in EXCLUDED_DIRS]
    if glob:
        argv.append(f"--glob={glob}")
    return argv + ["--", pattern, "."]


def _search_rg(rg: str, root: Path, pattern: str, glob: str | None) -> dict[str, list[tuple[int, str]]] | None:
    try:
        proc = subprocess.run(rg_argv(rg, pattern, glob), cwd=root, capture_output=True, timeout=RG_TIMEOUT_S,
                              env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")}, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode not in (0, 1):
        return None
    return _parse_rg(proc.stdout, root, glob)


def _parse_rg(out: bytes, root: Path, glob: str | None) -> dict[str, list[tuple[int, str]]]:
    found: dict[str, list[tuple[int, str]]] = {}
    for raw in out.split(b"\n"):
        name, sep, rest = raw.partition(b"\0")
        number, colon, text = rest.partition(b":")
        if not sep or not colon or not number.isdigit():
            continue
        rel = name.decode("utf-8", errors="replace").removeprefix("./")
        found.setdefault(rel, []).append((int(number), _clip(text.decode("utf-8", errors="replace"))))
    # same binary rule and glob reading as the Python scan (rg's differ in corner cases)
    return {rel: hits for rel, hits in sorted(found.items())
            if (glob is None or glob_match(rel, glob)) and read_text(root / rel) is not None}


def _search_python(root: Path, pattern: str, glob: str | None) -> dict[str, list[tuple[int, str]]]:
    needle = pattern.lower()
    found: dict[str, list[tuple[int, str]]] = {}
    for entry in list_files(root, glob):
        text = read_text(entry.path)
        if text is None or needle not in text.lower():
            continue
        hits = [(i, _clip(line)) for i, line in enumerate(text.split("\n"), 1) if needle in line.lower()]
        if hits:
            found[entry.rel] = hits[:MAX_LINES_PER_FILE]
    return found


def _clip(line: str) -> str:
    line = line.rstrip("\r")
    return line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + "…"
