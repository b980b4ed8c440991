"""Custom slash commands: Markdown files found in the command folders, read as Claude Code does.

Folders, first found wins for a name: `<repo>/.ctxagent/commands/`, `<repo>/.claude/commands/`,
then the user's `~/.config/ctxagent/commands/` (`$XDG_CONFIG_HOME` honoured). `review.md`
is `/review`; `git/commit.md` is `/git:commit`. Optional YAML front matter between `---`
lines: `description`, `argument-hint`, `allowed-tools`, `model` (other keys, such as
`disable-model-invocation`, are tolerated). A file that cannot be read or parsed is
skipped with one warning naming it. Reference: docs/slash-commands.md.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping

import yaml

from ctxagent.cli.slash.registry import NAME
from ctxagent.config.settings import user_config_path

#: Bytes a command file may have; a bigger one is skipped with a warning.
MAX_COMMAND_BYTES = 64 * 1024
_FRONT = re.compile(r"\A(?:\ufeff)?---[ \t]*\r?\n(.*?)^---[ \t]*(?:\r?\n|\Z)", re.DOTALL | re.MULTILINE)
_KEY_LINE = re.compile(r"^([A-Za-z][\w-]*)[ \t]*:[ \t]*(.*)$")
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when present: the same rules, faster
#: Parsed files by (path, folder, scope), kept while the file's size and mtime stay the same.
_CACHE: dict[tuple[Path, Path, str], tuple[tuple[int, int], "CustomCommand | CommandFileError"]] = {}


@dataclass(frozen=True)
class CustomCommand:
    """One Markdown command: `name` (`git:commit`), its `path`, `scope` ("project" or "user"),
    `description`, `argument_hint`, `allowed_tools` (None: the conversation's tools), `model`
    (None: the conversation's) and the prompt `body` (front matter removed)."""

    name: str
    path: Path
    scope: str
    description: str
    argument_hint: str
    allowed_tools: list[str] | None
    model: str | None
    body: str


class CommandFileError(ValueError):
    """A command file that cannot be used (message: the file and what is wrong)."""


def command_dirs(repo: Path, env: Mapping[str, str] | None = None) -> list[tuple[Path, str]]:
    """The command folders with their scope, first wins."""
    repo = Path(repo)
    user = user_config_path(env).parent / "commands"
    return [(repo / ".ctxagent" / "commands", "project"), (repo / ".claude" / "commands", "project"),
            (user, "user")]


def discover(repo: Path, env: Mapping[str, str] | None = None) -> tuple[list[CustomCommand], list[str]]:
    """Every custom command for `repo` (first folder wins for a name) and the warnings met."""
    found: dict[str, CustomCommand] = {}
    warnings: list[str] = []
    for folder, scope in command_dirs(repo, env):
        for path in _markdown_files(folder):
            command = _cached_load(path, folder, scope)
            if isinstance(command, CommandFileError):
                warnings.append(str(command))
                continue
            if command.name in found:
                warnings.append(f"custom command /{command.name} in {path} is shadowed by {found[command.name].path}")
                continue
            found[command.name] = command
    return list(found.values()), warnings


def _cached_load(path: Path, folder: Path, scope: str) -> CustomCommand | CommandFileError:
    """`load_command`, or the error it raised, parsed again only when the file changed."""
    try:
        st = os.stat(path)
        stamp = (st.st_size, st.st_mtime_ns)
    except OSError:
        stamp = (-1, -1)
    key = (path, folder, scope)
    cached = _CACHE.get(key)
    if cached is not None and cached[0] == stamp and stamp != (-1, -1):
        return cached[1]
    try:
        result: CustomCommand | CommandFileError = load_command(path, folder, scope)
    except CommandFileError as exc:
        result = exc
    _CACHE[key] = (stamp, result)
    return result


def _markdown_files(folder: Path) -> Iterator[Path]:
    if not folder.is_dir():
        return
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(".md"):
                yield Path(root) / name


def load_command(path: Path, folder: Path, scope: str) -> CustomCommand:
    """Read one command file under `folder`. Raises CommandFileError naming the file."""
    name = ":".join(path.relative_to(folder).with_suffix("").parts)
    if not NAME.fullmatch(name):
        raise CommandFileError(f"{path}: {name!r} is not a command name (letters, digits, '-', '_'); skipped")
    real = os.path.realpath(path)
    if os.path.commonpath([real, os.path.realpath(folder)]) != os.path.realpath(folder):
        raise CommandFileError(f"{path}: a link to a file outside {folder}; skipped")
    try:
        if os.path.getsize(real) > MAX_COMMAND_BYTES:
            raise CommandFileError(f"{path}: larger than {MAX_COMMAND_BYTES // 1024} KiB; skipped")
        text = Path(real).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CommandFileError(f"{path}: cannot be read ({exc}); skipped") from None
    meta, body = split_front_matter(text, path)
    return CustomCommand(name=name, path=path, scope=scope, body=body,
                         description=_text(meta.get("description")) or _first_line(body),
                         argument_hint=_hint(meta.get("argument-hint")),
                         allowed_tools=tool_rules(meta.get("allowed-tools"), path),
                         model=_text(meta.get("model")) or None)


def split_front_matter(text: str, path: Path) -> tuple[dict[str, Any], str]:
    """(front matter mapping, body). Raises CommandFileError for front matter that is not a mapping."""
    match = _FRONT.match(text)
    if match is None:
        return {}, text.lstrip("\ufeff")
    meta = _parse_yaml(match.group(1), path)
    return meta, text[match.end():]


def _parse_yaml(block: str, path: Path) -> dict[str, Any]:
    try:
        data = yaml.load(block, Loader=_LOADER)  # noqa: S506 - a safe loader
    except yaml.YAMLError as exc:
        data = _lenient(block)
        if data is None:
            raise CommandFileError(f"{path}: invalid YAML front matter ({_first_line(str(exc))}); skipped") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise CommandFileError(f"{path}: the front matter must be `key: value` lines; skipped")
    return {str(k): v for k, v in data.items()}


def _lenient(block: str) -> dict[str, Any] | None:
    """Lenient pass, one `key: value` line at a time, a value strict YAML rejects kept as text.
    Why: Claude Code's own docs write `argument-hint: [pr-number] [priority] [assignee]`,
    which strict YAML reads as a broken list. None when a line is not `key: value`."""
    data: dict[str, Any] = {}
    for line in block.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _KEY_LINE.match(line)
        if match is None:
            return None
        key, value = match.groups()
        try:
            data[key] = yaml.load(value, Loader=_LOADER) if value.strip() else None  # noqa: S506 - a safe loader
        except yaml.YAMLError:
            data[key] = value.strip()
    return data


def tool_rules(value: Any, path: Path) -> list[str] | None:
    """`allowed-tools` as a list of rules: a comma-separated string (commas inside `(...)` kept)
    or a YAML list. None when absent. Raises CommandFileError for another type."""
    if value is None:
        return None
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return [v.strip() for v in value if v.strip()]
    if isinstance(value, str):
        return [part.strip() for part in _split_rules(value) if part.strip()]
    raise CommandFileError(f"{path}: allowed-tools must be a string like \"Read, Bash(git status:*)\" or a list; skipped")


def _split_rules(text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += (char == "(") - (char == ")")
        if char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    return [*parts, text[start:]]


def _hint(value: Any) -> str:
    if isinstance(value, list):  # `argument-hint: [message]` is a one-item YAML list
        return " ".join(f"[{v}]" for v in value)
    return _text(value)


def _text(value: Any) -> str:
    return "" if value is None else " ".join(str(value).split())


def _first_line(text: str) -> str:
    line = next((ln.strip().lstrip("#").strip() for ln in text.splitlines() if ln.strip()), "")
    return line[:100]
