"""Checks behind `ctxagent.config.settings.load_settings`: key names, ranges, the `[context]` table.

`unknown_key_message` (did-you-mean), `allowed_range` (bounds read from the fields'
`msgspec.Meta`), `problem_text` (msgspec's wording in TOML's terms), `context_keys` /
`check_context` (`[context]` checked by `ContextConfig` and `CompactionConfig`
themselves). Details: docs/configuration.md ("Module notes").
"""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path
from typing import Any, Iterable

from ctxagent.errors import ConfigError

#: Prefix of the compaction keys in `[context]` (`ctxagent.context.compaction.compactor.CompactionConfig.from_settings`).
COMPACTION_PREFIX = "compaction_"


def unknown_key_message(dotted: str, valid: Iterable[str], path: Path | str) -> str:
    """`<path>: unknown setting 'a.b' (did you mean 'c'?); valid keys in [a]: ...`."""
    import difflib  # only for a wrong key (start-up, issue 16)

    section, key = dotted.split(".", 1)
    valid = sorted(valid)
    close = difflib.get_close_matches(key, valid, n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"{path}: unknown setting {dotted!r}{hint}; valid keys in [{section}]: {', '.join(valid)}"


def allowed_range(model: type, key: str) -> str | None:
    """What `model.<key>` (a `ctxagent.validation.Record` field) allows, as text: its bounds
    ("a finite number, 0 < value <= 3,600") or its choices ('one of "ask", "never"'); None
    when it has neither (or `model` is no Record)."""
    from typing import Literal, get_args, get_origin

    from ctxagent.validation import Record
    from ctxagent.validation import fields as record_fields  # type inspection: only for a bad value

    if not (isinstance(model, type) and issubclass(model, Record)):
        return None
    spec = next((f for f in record_fields(model) if f.name == key), None)
    if spec is None:
        return None
    if get_origin(spec.annotation) is Literal:
        return "one of " + ", ".join(f'"{choice}"' for choice in get_args(spec.annotation))
    low = high = ""
    for name, sign, is_low in (("gt", "<", True), ("ge", "<=", True), ("lt", "<", False), ("le", "<=", False)):
        bound = spec.bounds.get(name)
        if bound is not None:
            shown = f"{bound:,}" if isinstance(bound, int) else f"{bound:g}"
            low, high = (f"{shown} {sign} ", high) if is_low else (low, f" {sign} {shown}")
    if not low and not high:
        return None
    kind = "an integer" if spec.annotation is int else "a finite number"
    return f"{kind}, {low}value{high}"


#: msgspec's type names in TOML's terms, for `problem_text`.
_KINDS = {"int": "an integer", "float": "a number", "str": "a string", "bool": "a boolean (true or false)",
          "array": "an array", "object": "a table", "null": "no value"}


def problem_text(msg: str, allowed: bool = False) -> str:
    """msgspec's message `msg` in TOML's terms: "Expected `int`, got `float`" -> "expected an
    integer, got a number"; a broken bound or choice -> "out of range" / "not one of the
    choices" when `allowed` (what is allowed is said beside it), else "must be >= 1"."""
    wrong = re.fullmatch(r"Expected `([\w |]+)`, got `(\w+)`", msg)
    if wrong:
        wanted = " or ".join(_KINDS.get(k, k) for k in wrong.group(1).split(" | "))
        return f"expected {wanted}, got {_KINDS.get(wrong.group(2), wrong.group(2))}"
    bound = re.fullmatch(r"Expected `\w+` ([<>]=?) (\S+)", msg)
    if bound:
        return "out of range" if allowed else f"must be {bound.group(1)} {bound.group(2)}"
    length = re.fullmatch(r"Expected `(\w+)` of length ([<>])= (\d+)", msg)
    if length:
        unit = "items" if length.group(1) == "array" else "characters"
        return f"at {'most' if length.group(2) == '<' else 'least'} {length.group(3)} {unit}"
    if msg.startswith("Invalid enum value "):
        value, _, choices = msg[len("Invalid enum value "):].partition("; use one of ")
        if allowed:
            return "not one of the choices"
        return f"{value} is not an allowed value" + (f"; use one of {choices}" if choices else "")
    return msg[:1].lower() + msg[1:] if msg.startswith("Expected") else msg


def context_keys() -> set[str]:
    """Every key `[context]` accepts (imports the context package: call only when needed)."""
    from ctxagent.context.compaction.compactor import CompactionConfig
    from ctxagent.context.packet import ContextConfig

    return {f.name for f in fields(ContextConfig)} | {COMPACTION_PREFIX + f.name for f in fields(CompactionConfig)}


def check_context(values: dict[str, tuple[Any, str]]) -> None:
    """Check the `[context]` values (key -> (value, source)) with the context engine's own
    classes. Raises ConfigError naming the key, its value, where it came from and the rule."""
    if not values:
        return
    from ctxagent.context.compaction.compactor import CompactionConfig
    from ctxagent.context.packet import ContextConfig

    own = {f.name for f in fields(ContextConfig)}
    try:
        ContextConfig(**{k: v for k, (v, _s) in values.items() if k in own})
    except (ValueError, TypeError) as exc:
        raise _context_error(exc, values) from None
    compaction = {k[len(COMPACTION_PREFIX):]: v for k, (v, _s) in values.items() if k.startswith(COMPACTION_PREFIX)}
    try:
        CompactionConfig(**compaction)
    except (ConfigError, ValueError, TypeError) as exc:
        raise _context_error(exc, values) from None


def shown_value(value: Any) -> str:
    """A config value as the TOML file wrote it (`true`, not Python's `True`), for messages."""
    return str(value).lower() if isinstance(value, bool) else repr(value)


def _context_error(exc: Exception, values: dict[str, tuple[Any, str]]) -> ConfigError:
    text = str(exc)
    named = re.search(r"(?:ContextConfig\.|context\.)(\w+)", text)
    key = named.group(1) if named else None
    if key and key not in values and COMPACTION_PREFIX + key in values:
        key = COMPACTION_PREFIX + key
    if key in values:
        value, source = values[key]
        return ConfigError(f"invalid setting context.{key} = {shown_value(value)} from {source}: {text}. Fix it there.",
                           setting=f"context.{key}")
    return ConfigError(f"invalid [context] settings: {text}", setting="context")
