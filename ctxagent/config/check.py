"""Checks behind `ctxagent.config.settings.load_settings`: key names, ranges, the `[context]` table.

`unknown_key_message` (did-you-mean), `allowed_range` (bounds read from pydantic
constraints), `context_keys` / `check_context` (`[context]` checked by `ContextConfig`
and `CompactionConfig` themselves). Details: docs/configuration.md ("Module notes").
"""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path
from typing import Any, Iterable

from pydantic import BaseModel

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


def allowed_range(model: type[BaseModel], key: str) -> str | None:
    """The bounds of `model.<key>` as text, e.g. "a finite number, 0 < value <= 3600"; None without bounds."""
    field = model.model_fields.get(key)
    if field is None:
        return None
    low = high = ""
    for rule in field.metadata:
        for name, sign, is_low in (("gt", "<", True), ("ge", "<=", True), ("lt", "<", False), ("le", "<=", False)):
            bound = getattr(rule, name, None)
            if bound is not None:
                shown = f"{bound:,}" if isinstance(bound, int) else f"{bound:g}"
                low, high = (f"{shown} {sign} ", high) if is_low else (low, f" {sign} {shown}")
    if not low and not high:
        return None
    kind = "an integer" if field.annotation is int else "a finite number"
    return f"{kind}, {low}value{high}"


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
