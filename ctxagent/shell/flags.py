"""The flag scanner: split a command's words into flags, flag values and operands.

Words are read as GNU getopt_long does (clusters, attached and next-word values, `--`,
flags after operands), long flags in full only. PATH values are confined here and passed
absolute (`Scan.words`), so no command can forget them (docs/terminal.md, "What is refused").
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ctxagent.errors import ToolInputError, ToolRefusedError
from ctxagent.shell.parse import Word
from ctxagent.shell.paths import PathContext
from ctxagent.shell.specs import ATTACHED, NONE, OPTIONAL, PATH, Spec

_DEFAULT_WHY = "it is not on the allow-list of read-only flags"


@dataclass
class Scan:
    """Result of scanning the words after the command name.

    flags: (spelling, value) in order; spelling is `-x`, `-NUM` or `--name`; value None for a flag without one.
    operands: indexes (into the scanned words) of the operands, in order. words: the scanned words as the
    program must get them (a word holding a PATH flag value gets its checked absolute path instead).
    """

    flags: list[tuple[str, str | None]] = field(default_factory=list)
    operands: list[int] = field(default_factory=list)
    words: list[str] = field(default_factory=list)
    path_values: list[tuple[str, str, int, str]] = field(default_factory=list)
    """(flag, value, index of the word holding it, text before the value in that word)."""
    end_of_flags: int | None = None
    """Index of the `--` word that ended the flags, None when there was none."""

    def add(self, flag: str, kind: str, value: str | None, index: int, prefix: str = "") -> None:
        """Record `flag` (of value `kind`) with `value`, found in word `index` after `prefix`."""
        self.flags.append((flag, value))
        if kind == PATH and value is not None:
            self.path_values.append((flag, value, index, prefix))

    def has(self, names: frozenset[str] | set[str]) -> bool:
        """True when any flag spelled as one of `names` was given."""
        return any(name in names for name, _ in self.flags)

    def values(self, names: frozenset[str] | set[str]) -> list[str]:
        """Values of the flags spelled as one of `names`, in order."""
        return [v for name, v in self.flags if name in names and v is not None]


def scan(cmd: str, spec: Spec, words: list[Word], ctx: PathContext) -> Scan:
    """Scan `words` (the arguments, without the command name) against `spec`; confine
    the values of PATH flags to the workspace of `ctx` (see module doc).

    Raises ToolRefusedError for a flag that is not allowed, a missing value, a value
    given to a flag that takes none, or a PATH value outside the workspace.
    """
    result = Scan(words=[w.text for w in words])
    i = 0
    flags_done = False
    while i < len(words):
        text = words[i].text
        if flags_done or text == "-" or not text.startswith("-"):
            result.operands.append(i)
            if not spec.permute:
                flags_done = True
            i += 1
        elif text == "--":
            flags_done = True
            result.end_of_flags = i
            i += 1
        elif text.startswith("--"):
            i = _long_flag(cmd, spec, words, i, result)
        else:
            i = _short_cluster(cmd, spec, words, i, result)
    _confine_paths(cmd, result, ctx)
    return result


def _confine_paths(cmd: str, result: Scan, ctx: PathContext) -> None:
    """Check every PATH value and put its absolute path into `result.words`."""
    for flag, value, index, prefix in result.path_values:
        ctx.check_path(f"{cmd} {flag}", value, read=True)
        if value != "-":
            result.words[index] = prefix + ctx.resolve(value)


def _long_flag(cmd: str, spec: Spec, words: list[Word], i: int, result: Scan) -> int:
    name, eq, value = words[i].text.partition("=")
    kind = spec.long.get(name)
    if kind is None:
        raise refuse_flag(cmd, name, spec)
    if kind == NONE:
        if eq:
            raise ToolRefusedError(f"{cmd}: {words[i].text!r} is not allowed ({name} takes no value)")
        result.flags.append((name, None))
        return i + 1
    if kind == ATTACHED and not eq:
        raise ToolRefusedError(f"{cmd}: {name} takes its value only attached: write {name}=VALUE")
    if eq or kind == OPTIONAL:
        result.add(name, kind, value if eq else None, i, name + "=")
        return i + 1
    if i + 1 >= len(words):
        raise ToolInputError(f"{cmd}: {name} needs a value ({name}=VALUE or {name} VALUE)")
    result.add(name, kind, words[i + 1].text, i + 1)
    return i + 2


def _short_cluster(cmd: str, spec: Spec, words: list[Word], i: int, result: Scan) -> int:
    text = words[i].text
    j = 1
    while j < len(text):
        ch = text[j]
        if spec.numeric and ch.isdigit():
            end = j
            while end < len(text) and text[end].isdigit():
                end += 1
            result.flags.append(("-" + text[j:end], None))
            if spec.numeric_suffix is not None:
                _numeric_suffix(cmd, spec, text, end, result)
                return i + 1
            j = end
            continue
        kind = spec.short.get(ch)
        if kind is None:
            raise refuse_flag(cmd, "-" + ch, spec, cluster=text)
        if kind == NONE:
            result.flags.append(("-" + ch, None))
            j += 1
            continue
        rest = text[j + 1 :]
        if rest or kind == OPTIONAL:
            result.add("-" + ch, kind, rest or None, i, text[: j + 1])
            return i + 1
        if i + 1 >= len(words):
            raise ToolInputError(f"{cmd}: -{ch} needs a value (-{ch}VALUE or -{ch} VALUE)")
        result.add("-" + ch, kind, words[i + 1].text, i + 1)
        return i + 2
    return i + 1


def _numeric_suffix(cmd: str, spec: Spec, text: str, start: int, result: Scan) -> None:
    """The letters after `-NUM` in the program's obsolete syntax (head -100c): each must be
    in `spec.numeric_suffix`, and none takes a value, so the next word stays an operand."""
    for ch in text[start:]:
        if ch not in (spec.numeric_suffix or ""):
            allowed = f" (allowed after it: {', '.join(spec.numeric_suffix)})" if spec.numeric_suffix else ""
            raise ToolRefusedError(
                f"{cmd}: {text!r} is not allowed: {ch!r} cannot follow -NUM here{allowed}; "
                f"write the count as a flag value instead (for example -n NUM or -c NUM)")
        result.flags.append(("-" + ch, None))


def refuse_flag(cmd: str, flag: str, spec: Spec, *, cluster: str = "") -> ToolRefusedError:
    """The refusal for `flag`: which word, why, and what is allowed instead."""
    why = spec.why.get(flag, _DEFAULT_WHY)
    where = f" (in {cluster!r})" if cluster and cluster != flag else ""
    hint = ""
    if flag.startswith("--"):
        full = sorted(name for name in spec.long if name.startswith(flag))
        if full:
            hint = f"; spell the flag out in full ({', '.join(full)})"
    return ToolRefusedError(f"{cmd}: {flag}{where} is not allowed ({why}){hint}; {allowed_flags(spec)}")


def allowed_flags(spec: Spec) -> str:
    """A one-line list of the allowed flags of `spec`, for refusal messages."""
    short = " ".join(f"-{c}" for c in sorted(spec.short))
    long = " ".join(sorted(spec.long))
    parts = [p for p in (short, long) if p]
    if spec.numeric:
        parts.append("-NUM")
    return "allowed flags: " + (" ".join(parts) if parts else "none")
