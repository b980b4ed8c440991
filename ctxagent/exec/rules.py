"""Permission rules for commands: `allow = ["pytest *"]`, `deny = ["git push *"]`.

Matched word by word on the parsed argv, never the text. Allow only for one simple
command; deny checked on every simple command in the line and wins. Deny is a filter in
front of the user, not a wall: the sandbox is. Reference: docs/exec.md ("Permission rules").
"""

from __future__ import annotations

import fnmatch
import os
import re
import shlex
from dataclasses import dataclass
from typing import Iterable, Literal

from ctxagent.errors import ConfigError, ToolRefusedError
from ctxagent.shell.parse import parse_pipeline

_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh"})
_SHELL_C = re.compile(r"-[a-zA-Z]*c[a-zA-Z]*")
_SUBCOMMAND = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
_OPERATORS = frozenset({";", "&&", "||", "|", "&", "(", ")", "$(", "`", "\n", "|&", ";;"})
_INTERPRETER = re.compile(r"(?:python|pypy|node|nodejs|deno|bun|perl|ruby|php|lua|Rscript|osascript)[0-9.]*")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*", re.DOTALL)
# programs that run the rest of their words as a command: {name: options that take a value}
_WRAPPERS = {"env": {"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}, "command": set(), "exec": {"-a"},
             "builtin": set(), "nohup": set(), "time": set(), "nice": {"-n", "--adjustment"},
             "timeout": {"-s", "--signal", "-k", "--kill-after"}, "sudo": {"-u", "-g", "-C", "-D", "-h", "-p"},
             "xargs": {"-n", "-I", "-L", "-P", "-d", "-E", "-s", "-a", "--max-args", "--delimiter"},
             "stdbuf": set(), "setsid": set(), "chrt": set(), "ionice": {"-c", "-n"}}


@dataclass(frozen=True)
class Rule:
    """One rule: its `text` as written and its `words` (after quote removal)."""

    text: str
    words: tuple[str, ...]

    def matches(self, argv: Iterable[str], *, by_basename: bool = False) -> bool:
        """Whether `argv` matches; `by_basename`: the program may match by its base name."""
        argv = list(argv)
        if by_basename and argv and self.words and not _word_match(self.words[0], argv[0]):
            argv = [os.path.basename(argv[0]), *argv[1:]]
        return _match(self.words, argv)


def parse_rule(text: str, *, setting: str = "exec.allow") -> Rule:
    """`text` as a Rule. Raises ConfigError (naming `setting`) when it is empty or not one
    simple command (`pytest *`, `git diff *`, `ruff check src`)."""
    try:
        stages = parse_pipeline(text.replace("*", "\\*"))
    except ToolRefusedError as exc:
        raise ConfigError(f"{setting}: rule {text!r} is not one plain command ({exc}); "
                          'write it like "pytest *" or "git push *"', setting=setting) from None
    if len(stages) != 1 or not stages[0]:
        raise ConfigError(f"{setting}: rule {text!r} must be one command without `|`, e.g. \"pytest *\"",
                          setting=setting)
    return Rule(text=text, words=tuple(w.text for w in stages[0]))


def _match(pattern: tuple[str, ...], argv: list[str]) -> bool:
    if not pattern:
        return not argv
    if pattern == ("*",):
        return True
    if not argv:
        return False
    return _word_match(pattern[0], argv[0]) and _match(pattern[1:], argv[1:])


def _word_match(pattern: str, word: str) -> bool:
    return pattern == "*" or fnmatch.fnmatchcase(word, pattern)


@dataclass(frozen=True)
class Verdict:
    """What the rules say about a command line.

    action: "deny" (refuse, do not ask), "allow" (run without asking), "ask".
    rule: the rule that decided ("" for ask). argv: the simple command when the line is
    one, else None; why: when None, why the line is not one simple command.
    """

    action: Literal["allow", "deny", "ask"]
    rule: str = ""
    argv: tuple[str, ...] | None = None
    why: str = ""


@dataclass(frozen=True)
class PermissionRules:
    """Allow and deny rules (already parsed). `check(line)` gives the Verdict."""

    allow: tuple[Rule, ...] = ()
    deny: tuple[Rule, ...] = ()

    @classmethod
    def from_text(cls, allow: Iterable[str] = (), deny: Iterable[str] = ()) -> PermissionRules:
        """Parse rule strings. Raises ConfigError for a rule that is not one plain command."""
        return cls(tuple(parse_rule(t, setting="exec.allow") for t in allow),
                   tuple(parse_rule(t, setting="exec.deny") for t in deny))

    def check(self, line: str) -> Verdict:
        """Deny when any simple command in `line` matches a deny rule; allow when `line` is
        one simple command matching an allow rule; else ask."""
        argv, why = simple_command(line)
        segments = command_segments(line) + ([list(argv)] if argv is not None else [])
        for segment in segments:
            for rule in self.deny:
                if rule.matches(segment, by_basename=True):
                    return Verdict("deny", rule.text, argv, why)
        if argv is not None:
            for rule in self.allow:
                if rule.matches(argv):
                    return Verdict("allow", rule.text, argv)
        return Verdict("ask", "", argv, why)


def simple_command(line: str) -> tuple[tuple[str, ...] | None, str]:
    """(argv, "") when `line` is one simple command for `shell.parse`, else (None, why)."""
    try:
        stages = parse_pipeline(line)
    except ToolRefusedError as exc:
        return None, str(exc).removeprefix("terminal: ")
    if len(stages) != 1:
        return None, "it is a `|` pipeline"
    return tuple(w.text for w in stages[0]), ""


def command_segments(line: str, depth: int = 0) -> list[list[str]]:
    """Every simple command a shell would run for `line`, as well as a lenient split can
    tell (shlex with shell punctuation; `sh -c TEXT` looked into, two levels deep)."""
    # a newline separates commands like `;` (over-splitting a quoted newline only makes deny stricter)
    line = line.replace("$(", " ( ").replace("`", " ( ").replace("\n", " ; ")
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        tokens = list(lexer)
    except ValueError:  # an unclosed quote: split on blanks, the best we can do
        tokens = line.split()
    segments: list[list[str]] = [[]]
    for token in tokens:
        if token in _OPERATORS or set(token) <= set(";&|()<>"):
            segments.append([])
        else:
            segments[-1].append(token)
    found = [s for s in segments if s]
    found += [u for u in map(_unwrapped, found) if u and u not in found]
    for seg in list(found):
        if depth < 2 and os.path.basename(seg[0]) in _SHELLS:
            flag = next((i for i, w in enumerate(seg[1:-1], 1) if _SHELL_C.fullmatch(w)), None)
            if flag is not None:
                found += command_segments(seg[flag + 1], depth + 1)
    return found


def _unwrapped(seg: list[str]) -> list[str]:
    """`seg` without leading `NAME=value` words and wrapper programs (`env`, `nice -n 5`,
    `timeout 5`, `xargs`, `command`, `exec`...) and their options: the command they run."""
    words, i = list(seg), 0
    while i < len(words):
        if _ASSIGNMENT.fullmatch(words[i]):
            i += 1
            continue
        takes = _WRAPPERS.get(os.path.basename(words[i]))
        if takes is None:
            break
        name, i = os.path.basename(words[i]), i + 1
        while i < len(words) and (words[i].startswith("-") or (name == "env" and _ASSIGNMENT.fullmatch(words[i]))):
            i += 2 if words[i] in takes else 1
        if name == "timeout" and i < len(words):
            i += 1  # the duration
    return words[i:]


def always_key(argv: tuple[str, ...] | None) -> str | None:
    """What an "always" answer covers: the program and its subcommand (`git commit`,
    `python -m pytest`, `pytest`), or None when the line is not one simple command."""
    if not argv or not _always_safe(argv):
        return None
    words = [argv[0]]
    if len(argv) > 2 and argv[1] == "-m":
        words += argv[1:3]
    elif len(argv) > 1 and _SUBCOMMAND.fullmatch(argv[1]):
        words.append(argv[1])
    return shlex.join(words)


def _always_safe(argv: tuple[str, ...]) -> bool:
    """False when an "always" for `argv` would cover any command or code: a shell, a
    wrapper program (`env`, `xargs`, `sudo`...), an interpreter running `-c` code or a
    script (`python x.py` would key as `python`), `git -c`/`-C` before the subcommand."""
    program = os.path.basename(argv[0])
    if program in _SHELLS or program in _WRAPPERS or program in ("fish", "eval", "source", "."):
        return False
    if _INTERPRETER.fullmatch(program):
        return len(argv) > 2 and argv[1] == "-m"
    return not (program == "git" and len(argv) > 1 and argv[1].startswith("-"))


def key_rule(key: str) -> Rule:
    """The rule an "always" answer for `key` acts as: `<key> *`."""
    return Rule(text=f"{key} *", words=(*shlex.split(key), "*"))
