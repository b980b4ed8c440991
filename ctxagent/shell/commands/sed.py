"""Analyse a sed script and refuse anything but commands that only print.

The parser follows GNU sed 4.9 (`compile.c`); `e`, `r R`, `w W` and the `s///w`, `s///e`
flags are refused, and so is anything it does not recognise (fail closed). The allowed
commands: docs/terminal.md ("Module notes").
"""

from __future__ import annotations

from ctxagent.errors import ToolRefusedError
from ctxagent.shell.regex import bracket_open_at_end

_SIMPLE = set("=dDgGhHnNpPxzF")  # commands with no argument
_NUMBER_ARG = set("lLqQ")  # commands with an optional number
_LABEL_ARG = set("btTv")  # commands with an optional label / version
_TEXT_ARG = set("aic")  # text up to the end of the line
_S_FLAGS = set("gpiImM0123456789")
_FORBIDDEN = {
    "e": "runs a shell command", "r": "reads a file named in the script",
    "R": "reads a file named in the script", "w": "writes a file", "W": "writes a file",
}
ALLOWED = (
    "allowed: s/RE/TEXT/[gpiImM N], y/ABC/XYZ/, p P d D q Q = l n N g G h H x z F, { }, "
    ":label b t T, a/i/c TEXT, with addresses N, $, /RE/, \\cREc, N~M, A,B, A,+N, A,~N and !"
)


def check_sed_script(script: str) -> None:
    """Raise ToolRefusedError unless every command of `script` only prints or edits the
    pattern space. `script` is the `-e` pieces joined by newlines (as GNU sed does)."""
    _SedParser(script).run()


def _refuse(what: str, why: str) -> ToolRefusedError:
    return ToolRefusedError(f"sed: {what} is not allowed ({why}); {ALLOWED}")


class _SedParser:
    def __init__(self, script: str) -> None:
        self.s = script
        self.i = 0
        self.depth = 0

    def _ch(self) -> str:
        return self.s[self.i] if self.i < len(self.s) else ""

    def _skip_blanks(self) -> None:
        while self._ch() in (" ", "\t") and self._ch():
            self.i += 1

    def run(self) -> None:
        while True:
            while self._ch() and self._ch() in " \t\n;":
                self.i += 1
            if not self._ch():
                break
            if self._ch() == "#":
                self._skip_to_eol()
                continue
            self._command()
        if self.depth:
            raise _refuse("an unclosed `{`", "the script cannot be analysed")

    def _skip_to_eol(self) -> None:
        end = self.s.find("\n", self.i)
        self.i = len(self.s) if end < 0 else end

    def _command(self) -> None:
        if self._address():
            self._skip_blanks()
            if self._ch() == ",":
                self.i += 1
                self._skip_blanks()
                if not self._address(second=True):
                    raise _refuse("an address range without an end", "the script cannot be analysed")
        self._skip_blanks()
        while self._ch() == "!":
            self.i += 1
            self._skip_blanks()
        cmd = self._ch()
        self.i += 1
        self._dispatch(cmd)

    def _dispatch(self, cmd: str) -> None:
        if cmd in _FORBIDDEN:
            raise _refuse(f"the `{cmd}` command", _FORBIDDEN[cmd])
        if cmd == "{":
            self.depth += 1
            return
        if cmd == "}":
            self.depth -= 1
            if self.depth < 0:
                raise _refuse("an unmatched `}`", "the script cannot be analysed")
        elif cmd == "s":
            self._substitute()
        elif cmd == "y":
            delim = self._delimiter("y")
            self._delimited(delim)
            self._delimited(delim)
        elif cmd in _NUMBER_ARG:
            self._skip_blanks()
            while self._ch().isdigit():
                self.i += 1
        elif cmd in _LABEL_ARG or cmd == ":":
            self._label(required=cmd == ":")
        elif cmd in _TEXT_ARG:
            self._text()
            return
        elif cmd not in _SIMPLE:
            shown = repr(cmd) if cmd else "the end of the script"
            raise _refuse(f"the command {shown}", "it is not one we can analyse")
        self._end_of_command(cmd)

    def _address(self, second: bool = False) -> bool:
        """Consume one address if there is one; return whether there was."""
        ch = self._ch()
        if ch.isdigit() or (second and ch and ch in "+~"):
            self.i += 1
            while self._ch().isdigit():
                self.i += 1
            if self._ch() == "~" and not second:
                self.i += 1
                while self._ch().isdigit():
                    self.i += 1
            return True
        if ch == "$":
            self.i += 1
            return True
        if ch in ("/", "\\"):
            if ch == "\\":
                self.i += 1
            delim = self._ch()
            if delim in ("", "\n", "\\"):
                raise _refuse("a regex address with no delimiter", "the script cannot be analysed")
            self.i += 1
            self._delimited(delim, regex=True)
            while self._ch() in ("I", "M") and self._ch():
                self.i += 1
            return True
        return False

    def _delimiter(self, cmd: str) -> str:
        delim = self._ch()
        if delim in ("", "\n", "\\"):
            raise _refuse(f"`{cmd}` with no delimiter", "the script cannot be analysed")
        self.i += 1
        return delim

    def _delimited(self, delim: str, *, regex: bool = False) -> None:
        """Skip a regex or replacement up to the unescaped `delim` (GNU match_slash).
        A regex whose delimiter may sit inside [...] is refused (see terminal_regex)."""
        start = self.i
        while True:
            ch = self._ch()
            if ch in ("", "\n"):
                raise _refuse("an unterminated regex or replacement", "the script cannot be analysed")
            self.i += 1
            if ch == "\\":
                if not self._ch():
                    raise _refuse("a trailing backslash", "the script cannot be analysed")
                self.i += 1
            elif ch == delim:
                if regex and bracket_open_at_end(self.s[start : self.i - 1]):
                    raise _refuse(f"a {delim!r} inside [...] of a regex", "sed versions disagree on where the "
                                  f"regex ends; escape it as \\{delim} or use another delimiter")
                return

    def _substitute(self) -> None:
        delim = self._delimiter("s")
        self._delimited(delim, regex=True)
        self._delimited(delim)
        while self._ch() and self._ch() not in " \t\n;}#":
            flag = self._ch()
            if flag == "e":
                raise _refuse("the `e` flag of `s`", "it runs the pattern space as a shell command")
            if flag == "w":
                raise _refuse("the `w` flag of `s`", "it writes a file")
            if flag not in _S_FLAGS:
                raise _refuse(f"the `s` flag {flag!r}", "it is not one we can analyse")
            self.i += 1

    def _label(self, *, required: bool) -> None:
        self._skip_blanks()
        start = self.i
        while self._ch() and self._ch() not in " \t\n;}":
            self.i += 1
        if required and self.i == start:
            raise _refuse("`:` without a label", "the script cannot be analysed")

    def _text(self) -> None:
        """`a`, `i`, `c`: the text runs to the first newline not escaped by a backslash."""
        while self._ch():
            ch = self._ch()
            self.i += 1
            if ch == "\\":
                self.i += 1
            elif ch == "\n":
                return

    def _end_of_command(self, cmd: str) -> None:
        self._skip_blanks()
        ch = self._ch()
        if ch and ch not in "\n;}#":
            raise _refuse(f"the text {self.s[self.i:self.i + 20]!r} after `{cmd}`",
                          "the script cannot be analysed")
