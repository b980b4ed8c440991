"""Literal candidate search: which files contain the query text, and on which lines.

ripgrep when installed, else a pure-Python scan with the same answer; fixed string,
case-insensitive, a multi-line query by its longest line. The query is data, never an
rg option; `--no-ignore` keeps rg off ignore files (issue 17 S9). docs/context-fetch.md.
"""

from __future__ import annotations

import os
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path

from ctxagent.fetch.walk import EXCLUDED_DIRS, MAX_FILE_BYTES, glob_match, is_text, list_files, read_text
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
    return LiteralSearch(root, query, glob=glob, rg=rg).result()


class LiteralSearch:
    """`search_literal` started now and answered by `result()`: ripgrep runs (in a thread
    that waits for it) while the caller ranks, so a query costs about one rg run, not an
    rg run plus the ranking. `cancel()` stops rg when the answer is not needed."""

    def __init__(self, root: Path, query: str, *, glob: str | None = None, rg: str | None = None) -> None:
        self.root, self.glob, self.rg = root, glob, rg
        self.pattern = literal_pattern(query)
        self._found: dict[str, list[tuple[int, str]]] | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._cancelled = threading.Event()
        self._thread = None
        if self.pattern and rg is not None:
            self._thread = threading.Thread(target=self._run_rg, args=(rg,), name="context_fetch-rg", daemon=True)
            self._thread.start()

    def result(self) -> LiteralHits:
        """The hits (waits for rg; the Python scan answers when rg failed or is absent)."""
        if not self.pattern:
            return LiteralHits("python" if self.rg is None else "rg", "")
        if self._thread is not None:
            self._thread.join()
            if self._found is not None:
                return LiteralHits("rg", self.pattern, self._found)
        return LiteralHits("python", self.pattern, _search_python(self.root, self.pattern, self.glob))

    def cancel(self) -> None:
        """Stop rg if it still runs; `result()` must not be called afterwards."""
        self._cancelled.set()
        proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.kill()

    def _run_rg(self, rg: str) -> None:
        self._found = _search_rg(rg, self.root, self.pattern, self.glob, self)


def rg_argv(rg: str, pattern: str, glob: str | None) -> list[str]:
    """The ripgrep command line (a list: never passed through a shell)."""
    argv = [rg, "--no-config", "--fixed-strings", "--ignore-case", "--line-number", "--no-heading",
            "--with-filename", "--null", "--color=never", "--no-ignore", "--no-messages",
            f"--max-filesize={MAX_FILE_BYTES}", f"--max-count={MAX_LINES_PER_FILE}"]
    argv += [f"--glob=!{name}/" for name in EXCLUDED_DIRS]
    if glob:
        argv.append(f"--glob={glob}")
    return argv + ["--", pattern, "."]


def _search_rg(rg: str, root: Path, pattern: str, glob: str | None,
               search: LiteralSearch) -> dict[str, list[tuple[int, str]]] | None:
    try:
        with subprocess.Popen(rg_argv(rg, pattern, glob), cwd=root, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")}, stdin=subprocess.DEVNULL) as proc:
            search._proc = proc
            if search._cancelled.is_set():
                proc.kill()
            try:
                out, _ = proc.communicate(timeout=RG_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()
                return None
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode not in (0, 1):
        return None
    return _parse_rg(out, root, glob)


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
            if (glob is None or glob_match(rel, glob)) and is_text(root / rel)}


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
