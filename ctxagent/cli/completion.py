"""Tab completion in `ctxagent chat`: slash command names at the start of a line, `@path` anywhere.

`/` + the start of a name offers the built-in and custom commands (with their argument hint
and one-line help); `@` + the start of a path offers the workspace's files and folders,
relative to its root (folders end in `/`), never a path outside it, never `.git/` or
`.ctxagent/`, hidden names only when the typed part starts with a dot. Completion only
helps typing: the message is sent as written (docs/cli.md, "Chat input").
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from prompt_toolkit.completion import CompleteEvent, Completion
from prompt_toolkit.completion import Completer as _Completer
from prompt_toolkit.document import Document

from ctxagent.shell.paths import is_inside

#: Entries offered for one `@path` at most (a folder of thousands of files stays fast to show).
MAX_PATH_COMPLETIONS = 200
#: Folders never offered: git's own and ctxagent's state.
HIDDEN_FOLDERS = frozenset({".git", ".ctxagent"})
_SLASH = re.compile(r"^/([A-Za-z0-9_.:-]*)$")
#: `@path` at the start or after white space or an opening bracket, as `@file` is read elsewhere.
_AT_PATH = re.compile(r"(?:^|(?<=[\s(\[{<\"']))@([^\s`'\"<>()\[\]{}]*)$")


@dataclass(frozen=True)
class CommandChoice:
    """One command offered: `name` without the slash, `args` hint, one-line `description`."""

    name: str
    args: str
    description: str


class ChatCompleter(_Completer):
    """prompt_toolkit completer of slash commands (`commands()`, called at each completion:
    custom command files may change) and `@path`s under workspace `root` (an absolute path)."""

    def __init__(self, root: str, commands: Callable[[], Iterable[CommandChoice]]) -> None:
        self.root = os.path.realpath(root)
        self.commands = commands

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterator[Completion]:
        before = document.text_before_cursor
        slash = _SLASH.match(before) if "\n" not in before else None
        if slash is not None:
            yield from self._command_completions(slash.group(1))
            return
        at = _AT_PATH.search(before)
        if at is not None:
            yield from self._path_completions(at.group(1))

    def _command_completions(self, typed: str) -> Iterator[Completion]:
        seen: set[str] = set()
        for choice in sorted(self.commands(), key=lambda c: c.name):
            if choice.name.startswith(typed) and choice.name not in seen:
                seen.add(choice.name)
                shown = f"/{choice.name} {choice.args}".rstrip()
                yield Completion(choice.name, start_position=-len(typed), display=shown,
                                 display_meta=choice.description)

    def _path_completions(self, typed: str) -> Iterator[Completion]:
        folder, _, prefix = typed.rpartition("/")
        base = os.path.realpath(os.path.join(self.root, folder)) if folder else self.root
        if not is_inside(base, self.root):
            return
        try:
            with os.scandir(base) as entries:
                names = sorted((e.name, _is_folder(e)) for e in entries if e.name.startswith(prefix))
        except OSError:
            return
        shown = 0
        for name, is_folder in names:
            if (name.startswith(".") and not prefix.startswith(".")) or (is_folder and name in HIDDEN_FOLDERS):
                continue
            if shown == MAX_PATH_COMPLETIONS:
                return
            shown += 1
            text = name + "/" if is_folder else name
            yield Completion(text, start_position=-len(prefix), display=text)


def slash_choices(repo: Path) -> list[CommandChoice]:
    """The built-in commands, then the custom ones found now under `repo` that no built-in shadows."""
    from ctxagent.cli.slash import builtins
    from ctxagent.cli.slash.custom import discover

    built = builtins()
    taken = set(built.names())
    found, _warnings = discover(repo)  # shown when a command is used, not while typing
    return [*(CommandChoice(c.name, c.args, c.description) for c in built.commands()),
            *(CommandChoice(c.name, c.argument_hint, c.description or "(no description)")
              for c in found if c.name not in taken)]


def _is_folder(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()  # a link to a folder counts; where it leads is checked when it is opened
    except OSError:
        return False
