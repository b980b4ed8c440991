"""What the model sees after a command or python_exec run: one compact text.

`$ cmd`, then `exit code · seconds · sandbox`, `[stdout]` / `[stderr]` (head and tail,
control characters escaped) and `[files]`; a timeout, Ctrl-C, missing program, binary
output or cut output get a line each. Example: docs/exec.md ("How a run goes").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from ctxagent.exec.process import Completed
from ctxagent.shell.output import HeadTailBuffer, strip_line_ends

#: Files listed per kind before "(+N more)".
MAX_FILES_SHOWN = 30
_BINARY_SAMPLE = 8192


@dataclass(frozen=True)
class RunReport:
    """A run as data: `text` for the model, `data` for library callers (exit code, files)."""

    text: str
    data: dict[str, Any]
    ok: bool


def build_report(title: str, done: Completed, *, sandbox: str, timeout: float, max_output: int,
                 changes: Iterable[Any] = ()) -> RunReport:
    """The report of `done`. `title`: first line (`$ cmd` or `python_exec (12 lines)`);
    `sandbox`: short sandbox name; `changes`: FileChange-like (`path`, `kind`)."""
    files = _files(changes)
    lines = [title, _status(done, sandbox, timeout)]
    for name, buf in (("stdout", done.stdout), ("stderr", done.stderr)):
        body = _stream(buf, max_output)
        if body:
            lines += [f"[{name}]", body]
    if not done.stdout.total and not done.stderr.total and not done.not_found:
        lines.append("(no output)")
    if files:
        lines.append("[files] " + " · ".join(f"{kind}: {', '.join(_cap(paths))}" for kind, paths in files.items()))
    elif done.not_found == "":
        lines.append("[files] none created, modified or deleted")
    data = {"exit_code": done.exit_code, "duration_s": round(done.duration_s, 3), "timed_out": done.timed_out,
            "interrupted": done.interrupted, "files": files, "not_found": done.not_found or None}
    return RunReport("\n".join(lines), data, ok=done.exit_code == 0)


def _status(done: Completed, sandbox: str, timeout: float) -> str:
    took = f"{done.duration_s:.2f} s"
    if done.not_found:
        return (f"not run: {done.not_found}; check the program name (is it installed, on PATH, or in the "
                "repository's .venv/bin?)")
    if done.timed_out:
        return (f"TIMED OUT after {timeout:g} s: killed with every process it started · sandbox: {sandbox}; "
                "the output below is what it printed before (partial)")
    if done.interrupted:
        return f"INTERRUPTED by the user (Ctrl-C) after {took}: killed with every process it started"
    code = done.exit_code
    what = f"killed by signal {-code}" if code is not None and code < 0 else f"exit code {code}"
    if code == 127:
        what += " (command not found: check the program name, PATH, or the repository's .venv/bin)"
    return f"{what} · {took} · sandbox: {sandbox}"


def _stream(buf: HeadTailBuffer, max_output: int) -> str:
    if not buf.total:
        return ""
    sample = bytes(buf.head[:_BINARY_SAMPLE])
    if b"\x00" in sample or _mostly_undecodable(sample):
        return f"(binary output, {buf.total} bytes, not shown)"
    text = strip_line_ends(buf.render(max_output, escape=True))
    if buf.total > max_output:
        text += f"\n[output was {buf.total} bytes; the middle was cut, limit {max_output} bytes per stream]"
    return text


def _mostly_undecodable(sample: bytes) -> bool:
    text = sample.decode("utf-8", errors="replace")
    return len(text) > 32 and text.count("\ufffd") > len(text) // 10


def _files(changes: Iterable[Any]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for change in changes:
        out.setdefault(str(change.kind), []).append(str(change.path))
    return {kind: sorted(paths) for kind, paths in sorted(out.items())}


def _cap(paths: list[str]) -> list[str]:
    if len(paths) <= MAX_FILES_SHOWN:
        return paths
    return [*paths[:MAX_FILES_SHOWN], f"(+{len(paths) - MAX_FILES_SHOWN} more)"]
