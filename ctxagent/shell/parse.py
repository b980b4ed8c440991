"""Split a command line into a pipeline of words, as a POSIX shell would, refusing all but plain words and `|`.

The terminal's whole "shell": quote removal and splitting on blanks and `|`; separators,
redirection, expansion, grouping and comments raise `ToolRefusedError` naming the text.
Unquoted globs are remembered (`Word.glob`). POSIX Shell Command Language 2.2, 2.3.
"""

from __future__ import annotations

import glob as _glob
from dataclasses import dataclass

from ctxagent.errors import ToolRefusedError

MAX_COMMAND_CHARS = 8192
"""Longest command line accepted (issue 17 S12/S13: a 36 KB line started 6,001 processes)."""
MAX_STAGES = 16
"""Most pipeline stages accepted (issue 17 S12)."""
_BLANKS = " \t"
_GLOB_CHARS = "*?["
# Inside double quotes a backslash only escapes these (POSIX 2.2.3).
_DQUOTE_ESCAPABLE = '$`"\\\n'


@dataclass(frozen=True)
class Word:
    """One word after quote removal.

    text: the argument the program receives.
    glob: a `glob` pattern (quoted parts escaped) when the word had an unquoted `*`, `?`
      or `[`, else None.
    """

    text: str
    glob: str | None = None


def parse_pipeline(line: str) -> list[list[Word]]:
    """Parse `line` into pipeline stages, each a non-empty list of words.

    Raises ToolRefusedError for anything but words and single `|` pipes (see module doc).
    """
    if "\x00" in line:
        raise _refuse("a NUL byte", "it cannot be passed to a program")
    if len(line) > MAX_COMMAND_CHARS:
        raise _refuse(f"a command of {len(line)} characters", f"the limit is {MAX_COMMAND_CHARS}",
                      "run a shorter command, or several")
    if line.count("|") + 1 > MAX_STAGES:  # cheap bound before lexing; exact count below
        stages = _Lexer(line).run()
        if len(stages) > MAX_STAGES:
            raise _refuse(f"a pipeline of {len(stages)} stages", f"the limit is {MAX_STAGES}",
                          "split it into several commands")
        return stages
    return _Lexer(line).run()


def _refuse(what: str, why: str, instead: str = "") -> ToolRefusedError:
    tail = f"; {instead}" if instead else ""
    return ToolRefusedError(f"terminal: {what} is not allowed ({why}){tail}")


class _WordBuilder:
    """Characters of the word being read, each marked quoted or not."""

    def __init__(self) -> None:
        self.chars: list[str] = []
        self.quoted: list[bool] = []
        self.started = False  # '' is an (empty) word

    def add(self, ch: str, quoted: bool) -> None:
        self.chars.append(ch)
        self.quoted.append(quoted)
        self.started = True

    def prev_unquoted(self) -> str | None:
        """The previous character when it was unquoted, else None."""
        if self.chars and not self.quoted[-1]:
            return self.chars[-1]
        return None

    def finish(self) -> Word:
        _check_braces(self.chars, self.quoted)
        text = "".join(self.chars)
        has_glob = any(c in _GLOB_CHARS and not q for c, q in zip(self.chars, self.quoted))
        if not has_glob:
            return Word(text)
        pattern = "".join(
            c if not q else _glob.escape(c) for c, q in zip(self.chars, self.quoted)
        )
        return Word(text, pattern)


def _check_braces(chars: list[str], quoted: list[bool]) -> None:
    """Refuse brace expansion (`{a,b}`, `{1..3}`): a shell would turn it into many words.

    One pass (issue 17 S13): after the last unquoted `{`, an unquoted `,` or `..` and then
    an unquoted `}` refuse the word."""
    open_seen = expands = False
    prev_dot = False
    for ch, q in zip(chars, quoted):
        if q:
            prev_dot = False
            continue
        if ch == "{":
            open_seen, expands = True, False
        elif ch == "," or (ch == "." and prev_dot):
            expands = expands or open_seen
        elif ch == "}" and open_seen and expands:
            word = "".join(chars)
            raise _refuse(f"brace expansion in {word!r}", "a shell would expand it into several words",
                          "write each word out, or quote the braces")
        prev_dot = ch == "."


class _Lexer:
    """Character-by-character reader; `run` returns the stages."""

    def __init__(self, line: str) -> None:
        self.line = line
        self.pos = 0
        self.stages: list[list[Word]] = [[]]
        self.word = _WordBuilder()

    def run(self) -> list[list[Word]]:
        while self.pos < len(self.line):
            self._step(self.line[self.pos])
        self._end_word()
        for stage in self.stages:
            if not stage:
                raise _refuse("an empty command in a pipeline", "every `|` needs a command on both sides")
        return self.stages

    def _peek(self, offset: int = 1) -> str:
        i = self.pos + offset
        return self.line[i] if i < len(self.line) else ""

    def _end_word(self) -> None:
        if self.word.started:
            self.stages[-1].append(self.word.finish())
        self.word = _WordBuilder()

    def _step(self, ch: str) -> None:
        if ch in _BLANKS:
            self._end_word()
            self.pos += 1
        elif ch == "'":
            self._single_quoted()
        elif ch == '"':
            self._double_quoted()
        elif ch == "\\":
            self._backslash()
        elif ch == "|":
            self._pipe()
        else:
            self._check_unquoted(ch)
            self.word.add(ch, quoted=False)
            self.pos += 1

    def _pipe(self) -> None:
        nxt = self._peek()
        if nxt == "|":
            raise _refuse("`||`", "it runs a second command when the first fails",
                          "only `|` pipes are allowed; run commands one per call")
        if nxt == "&":
            raise _refuse("`|&`", "it redirects standard error", "use a plain `|`")
        self._end_word()
        self.stages.append([])
        self.pos += 1

    def _single_quoted(self) -> None:
        end = self.line.find("'", self.pos + 1)
        if end < 0:
            raise _refuse("an unterminated single quote", "the command line ends inside it",
                          "close the quote")
        for c in self.line[self.pos + 1 : end]:
            self.word.add(c, quoted=True)
        self.word.started = True
        self.pos = end + 1

    def _double_quoted(self) -> None:
        self.word.started = True
        i = self.pos + 1
        while i < len(self.line):
            c = self.line[i]
            if c == '"':
                self.pos = i + 1
                return
            if c == "\\" and i + 1 < len(self.line) and self.line[i + 1] in _DQUOTE_ESCAPABLE:
                if self.line[i + 1] != "\n":  # backslash-newline is a line continuation
                    self.word.add(self.line[i + 1], quoted=True)
                i += 2
                continue
            if c == "$":
                raise _expansion_error(self.line, i, inside_double_quotes=True)
            if c == "`":
                raise _refuse("a backquote inside double quotes", "a shell would run the text as a command",
                              "use single quotes for literal text")
            self.word.add(c, quoted=True)
            i += 1
        raise _refuse("an unterminated double quote", "the command line ends inside it", "close the quote")

    def _backslash(self) -> None:
        nxt = self._peek()
        if nxt == "":
            raise _refuse("a trailing backslash", "it escapes nothing")
        if nxt != "\n":  # backslash-newline: line continuation, both removed
            self.word.add(nxt, quoted=True)
        self.pos += 2

    def _check_unquoted(self, ch: str) -> None:
        """Refuse shell syntax that is not a plain word character (outside quotes)."""
        if ch in "\n\r":
            name = "a newline" if ch == "\n" else "a carriage return"
            raise _refuse(f"{name} outside quotes", "a shell would start another command there",
                          "run one command (or one `|` pipeline) per call")
        if ch == ";":
            raise _refuse("`;`", "it separates commands", "run one command per call")
        if ch == "&":
            what = "`&&`" if self._peek() == "&" else "`&`"
            why = "it runs a second command" if what == "`&&`" else "it runs a command in the background"
            raise _refuse(what, why, "only `|` pipes are allowed; run commands one per call")
        if ch in "<>":
            self._redirection(ch)
        if ch == "`":
            raise _refuse("a backquote", "a shell would run the text as a command (command substitution)",
                          "quote literal text with single quotes")
        if ch == "$":
            raise _expansion_error(self.line, self.pos, inside_double_quotes=False)
        if ch in "()":
            raise _refuse(f"an unquoted `{ch}`", "a shell would treat it as grouping or a subshell",
                          f"quote it ('{ch}' or \\{ch}) if it is an argument, e.g. for find")
        self._check_word_start(ch)
        if ord(ch) < 32 or ord(ch) == 127:
            raise _refuse(f"the control character {ch!r} outside quotes", "it is not plain text",
                          "quote it or remove it")

    def _redirection(self, ch: str) -> None:
        nxt = self._peek()
        if nxt == "(":
            what = f"`{ch}(...)` process substitution"
            why = "a shell would run the text as a command"
        else:
            what = f"the redirection `{ch}{nxt if nxt in '<>&|' else ''}`"
            why = "it reads or writes files outside the command's arguments"
        raise _refuse(what, why, "pass file names as arguments; output comes back to you")

    def _check_word_start(self, ch: str) -> None:
        prev = self.word.prev_unquoted()
        at_start = not self.word.started
        if ch == "#" and at_start:
            raise _refuse("`#` at the start of a word", "a shell would ignore the rest of the line (comment)",
                          "remove the comment or quote the text")
        if ch == "~" and (at_start or prev in ("=", ":")):
            raise _refuse("`~`", "a shell would expand it to a home directory outside the workspace",
                          "use a path relative to the workspace")


def _expansion_error(line: str, i: int, *, inside_double_quotes: bool) -> ToolRefusedError:
    """The refusal for a `$` at `line[i]`, naming what a shell would have done."""
    nxt = line[i + 1] if i + 1 < len(line) else ""
    if nxt == "(":
        what, why = "`$(...)`", "a shell would run the text as a command (command substitution)"
    elif nxt == "{":
        what, why = "`${...}`", "a shell would substitute a variable"
    elif nxt == "'":
        what, why = "`$'...'` quoting", "a shell would interpret escape sequences in it"
    elif nxt == '"':
        what, why = '`$"..."` quoting', "a shell would translate the text"
    elif nxt and (nxt.isalnum() or nxt in "_?!#@*-$"):
        end = i + 1
        while end < len(line) and (line[end].isalnum() or line[end] == "_"):
            end += 1
        name = line[i : max(end, i + 2)]
        what, why = f"the variable `{name}`", "a shell would substitute its value"
    else:
        what, why = "`$`", "a shell may treat it as an expansion"
    where = " inside double quotes" if inside_double_quotes else ""
    return _refuse(f"{what}{where}", why, "put literal text in single quotes, e.g. 'a$b'")
