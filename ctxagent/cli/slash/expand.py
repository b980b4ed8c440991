"""A custom command's body made into the prompt: arguments, `@file` and `` !`cmd` ``.

`$ARGUMENTS` and `$1`..`$9` first, then one pass for `` !`cmd` `` (read-only terminal)
and `@path` (workspace only, cut at MAX_FILE_CHARS). Order and edge cases:
docs/slash-commands.md ("What the body can use").
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ctxagent.errors import ToolRefusedError
from ctxagent.shell.paths import PathContext

#: Characters of one `@file` or one command's output put into the prompt; the rest is cut, marked.
MAX_FILE_CHARS = 20_000
_ARGS = re.compile(r"\$ARGUMENTS\b|\$([1-9])(?!\d)")
#: `` !`cmd` `` (one line), or `@path` at the start or after white space or an opening bracket.
_DYNAMIC = re.compile(r"!`([^`\n]+)`|(?<![^\s(\[{<\"'])@([^\s`'\"<>()\[\]{}]+)")
_TRAILING = ".,;:!?"

#: `run(command) -> (ok, text)`: the read-only terminal (ok False: refused or failed, text says why).
RunCommand = Callable[[str], "tuple[bool, str]"]


@dataclass
class Expansion:
    """The prompt `text`, and what went into it: `files` inlined, `commands` run, `refusals` shown."""

    text: str
    files: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)


def fill_arguments(body: str, arguments: str) -> str:
    """`body` with `$ARGUMENTS` and `$1`..`$9` filled in from `arguments` (see the module doc)."""
    try:
        words = shlex.split(arguments)
    except ValueError:  # an unmatched quote: plain white-space words
        words = arguments.split()
    used = bool(_ARGS.search(body))

    def value(match: re.Match) -> str:
        if match.group(1) is None:
            return arguments
        index = int(match.group(1)) - 1
        return words[index] if index < len(words) else ""

    text = _ARGS.sub(value, body)
    if arguments and not used:
        text = text.rstrip("\n") + f"\n\nARGUMENTS: {arguments}\n"
    return text


def expand(body: str, arguments: str, *, repo: Path, run: RunCommand) -> Expansion:
    """The prompt for `body` called with `arguments`, `@file` read inside `repo`, `` !`cmd` `` through `run`."""
    out = Expansion(text="")
    root = str(Path(repo).resolve())
    paths = PathContext(root=root, cwd=root)

    def replace(match: re.Match) -> str:
        if match.group(1) is not None:
            return _command(match.group(1).strip(), run, out)
        return _file(match.group(2), paths, out)

    out.text = _DYNAMIC.sub(replace, fill_arguments(body, arguments))
    return out


def _command(command: str, run: RunCommand, out: Expansion) -> str:
    ok, text = run(command)
    if not ok:
        out.refusals.append(f"!`{command}`: {text}")
        return f"[!`{command}` was not run: {text}]"
    out.commands.append(command)
    return _cut(text.rstrip("\n"), f"the output of {command}")


def _file(raw: str, paths: PathContext, out: Expansion) -> str:
    ref = raw.rstrip(_TRAILING)
    tail = raw[len(ref):]
    if not ref:
        return "@" + raw
    try:
        paths.check_path("@file", ref)
    except ToolRefusedError as exc:
        return _refuse(ref, str(exc).removeprefix("@file: "), out) + tail
    full = Path(paths.resolve(ref))
    if not full.exists():
        if "/" not in ref and "." not in ref:  # "@alice": a mention, not a file
            return "@" + raw
        return _refuse(ref, "no such file in the workspace", out) + tail
    if not full.is_file():
        return _refuse(ref, "not a regular file (a folder?); name a file", out) + tail
    data = full.read_bytes()[: MAX_FILE_CHARS * 4 + 4]
    if b"\0" in data[:8192]:
        return _refuse(ref, "a binary file", out) + tail
    text = data.decode("utf-8", errors="replace")
    out.files.append(ref)
    return f'<file path="{ref}">\n{_cut(text.rstrip(chr(10)), ref, full.stat().st_size)}\n</file>' + tail


def _refuse(ref: str, why: str, out: Expansion) -> str:
    out.refusals.append(f"@{ref}: {why}")
    return f"[@{ref} was not inlined: {why}]"


def _cut(text: str, what: str, size: int | None = None) -> str:
    if len(text) <= MAX_FILE_CHARS:
        return text
    total = f" of {size:,} bytes" if size is not None else f" of {len(text):,} characters"
    return text[:MAX_FILE_CHARS] + f"\n[... {what} cut at {MAX_FILE_CHARS:,} characters{total} ...]"


def terminal_runner(terminal: Any) -> RunCommand:
    """A RunCommand over a read-only TerminalTool (`execute` never raises; refusals come back as ok=False)."""

    def run(command: str) -> tuple[bool, str]:
        result = terminal.execute({"command": command})
        return bool(result.ok), str(result.content)

    return run
