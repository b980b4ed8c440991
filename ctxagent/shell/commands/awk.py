"""Analyse an awk program; refuse anything that could run a command, write a file or read a non-operand.

Two fail-closed layers: forbidden words on the raw text (`system`, `getline`, `ENVIRON`,
`@`...), then awk tokens (no `|`, no top-level `>`/`>>` in `print`); regex versus
division per POSIX awk "Lexical Conventions" (docs/terminal.md, "Module notes").
"""

from __future__ import annotations

import re

from ctxagent.errors import ToolRefusedError
from ctxagent.shell.regex import bracket_open_at_end

_FORBIDDEN_WORDS = re.compile(r"\b(system|getline|close|fflush|ENVIRON|PROCINFO|ARGV|ARGC|SYMTAB|FUNCTAB|"
                              r"bindtextdomain)\b|@")
_WORD_WHY = {
    "system": "runs a shell command", "getline": "reads from commands or files",
    "close": "belongs to pipes and files", "fflush": "belongs to pipes and files",
    "ENVIRON": "reads the environment", "PROCINFO": "reads process information",
    "ARGV": "can change which files are read", "ARGC": "can change which files are read",
    "@": "loads gawk extensions or files",
    "SYMTAB": "gives gawk's ARGV, ENVIRON and PROCINFO under other names",
    "FUNCTAB": "belongs to gawk's indirect calls", "bindtextdomain": "reads message catalogues from a directory",
}
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NUMBER = re.compile(r"(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_OPERATORS = sorted(
    "&& || >> >= <= == != !~ ++ -- += -= *= /= %= ^= **= ** { } ( ) [ ] ; , + - * / % ^ ! > < | ? : ~ $ =".split(),
    key=len, reverse=True,
)
_KEYWORDS = frozenset(
    "BEGIN END function func if else while for do break continue next nextfile exit return "
    "delete in print printf".split()
)
_COND_KEYWORDS = frozenset({"if", "while", "for"})
_OPERAND = "operand"  # previous token ends an operand: a following `/` divides
_START = "start"  # an expression may start: a following `/` opens a regex
ALLOWED = (
    "allowed: patterns, actions, expressions, print/printf to standard output, "
    "string and math functions; not system(), getline, pipes, redirection, ENVIRON"
)


def check_awk_program(program: str) -> None:
    """Raise ToolRefusedError unless `program` only reads its input and prints."""
    found = _FORBIDDEN_WORDS.search(program)
    if found:
        word = found.group(0)
        raise _refuse(f"`{word}`", _WORD_WHY[word])
    _AwkScanner(program).run()


def _refuse(what: str, why: str) -> ToolRefusedError:
    return ToolRefusedError(f"awk: {what} is not allowed ({why}); {ALLOWED}")


class _AwkScanner:
    def __init__(self, program: str) -> None:
        self.s = program
        self.i = 0
        self.prev = _START
        self.parens: list[bool] = []  # True for the `(` of an if/while/for header
        self.last_name = ""
        self.print_depth: int | None = None  # paren depth of the open print statement

    def run(self) -> None:
        while self.i < len(self.s):
            self._token()

    def _token(self) -> None:
        ch = self.s[self.i]
        if ch in " \t":
            self.i += 1
            return
        if ch == "\\" and self.s[self.i + 1 : self.i + 2] == "\n":
            self.i += 2
            return
        if ch == "#":
            end = self.s.find("\n", self.i)
            self.i = len(self.s) if end < 0 else end
            return
        name_before, self.last_name = self.last_name, ""
        name = _NAME.match(self.s, self.i)
        number = _NUMBER.match(self.s, self.i)
        if ch == "\n":
            self._newline(name_before)
        elif ch == '"':
            self._string()
        elif ch == "/" and self.prev == _START:
            self._regex()
        elif name:
            self._name(name.group(0))
        elif number:
            self.i = number.end()
            self.prev = _OPERAND
        else:
            self._operator(name_before)

    def _newline(self, name_before: str) -> None:
        """A newline ends a statement only after an operand (or a bare print); after
        `,`, `{`, `&&`, `||`, `do`, `else` awk reads on, so we do too (fail closed)."""
        self.i += 1
        if self.prev == _OPERAND or name_before in ("print", "printf"):
            self._statement_end()

    def _name(self, name: str) -> None:
        self.i += len(name)
        self.last_name = name
        if name in ("print", "printf"):
            self.print_depth = len(self.parens)
        self.prev = _START if name in _KEYWORDS else _OPERAND

    def _string(self) -> None:
        self.i += 1
        while self.i < len(self.s):
            ch = self.s[self.i]
            if ch == "\\":
                self.i += 2
                continue
            if ch == "\n":
                break
            self.i += 1
            if ch == '"':
                self.prev = _OPERAND
                return
        raise _refuse("an unterminated string", "the program cannot be analysed")

    def _regex(self) -> None:
        """Skip a regex literal. It ends at the first unescaped `/`; awks that read
        bracket expressions (`[/]`) would end it later, so a `/` that may sit inside a
        bracket expression is refused."""
        start = self.i + 1
        j = start
        while j < len(self.s) and self.s[j] not in "/\n":
            j += 2 if self.s[j] == "\\" else 1
        if j >= len(self.s) or self.s[j] != "/":
            raise _refuse("an unterminated regex", "the program cannot be analysed")
        body = self.s[start:j]
        if bracket_open_at_end(body):
            raise _refuse("a `/` inside [...] in a regex", "awks disagree on where the regex ends; write \\/")
        self.i = j + 1
        self.prev = _OPERAND

    def _operator(self, name_before: str) -> None:
        op = next((o for o in _OPERATORS if self.s.startswith(o, self.i)), None)
        if op is None:
            ch = self.s[self.i]
            what = "a backquote" if ch == "`" else f"the character {ch!r}"
            raise _refuse(what, "it is not awk syntax we can analyse")
        self.i += len(op)
        if op == "|":
            raise _refuse("`|`", "it pipes output to, or input from, a command")
        if op in (">", ">>") and self.print_depth == len(self.parens):
            raise _refuse(f"`{op}` after print", "it redirects output to a file")
        if op == "(":
            self.parens.append(name_before in _COND_KEYWORDS)
        elif op == ")":
            self._close_paren()
            return
        elif op in (";", "}", "{"):
            self._statement_end()
        self.prev = _OPERAND if op in ("]", "++", "--") else _START

    def _close_paren(self) -> None:
        if not self.parens:
            raise _refuse("an unmatched `)`", "the program cannot be analysed")
        header = self.parens.pop()
        if self.print_depth is not None and self.print_depth > len(self.parens):
            self.print_depth = None
        self.prev = _START if header else _OPERAND

    def _statement_end(self) -> None:
        if self.print_depth is not None and self.print_depth >= len(self.parens):
            self.print_depth = None
        self.prev = _START

