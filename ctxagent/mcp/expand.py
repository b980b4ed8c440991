"""`${VAR}` and `${VAR:-default}` in `.mcp.json` values, as Claude Code expands them."""

from __future__ import annotations

import re
from typing import Any, Mapping

from ctxagent.errors import ConfigError

_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def expand(text: str, env: Mapping[str, str], *, where: str) -> str:
    """`text` with each `${VAR}` replaced by `env[VAR]` and each `${VAR:-default}` by `env[VAR]`
    when set and not empty, else `default`. Raises ConfigError naming `where` and the variable
    when a `${VAR}` without a default is not set."""

    def one(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        value = env.get(name)
        if default is not None:
            return value if value else default
        if value is None:
            raise ConfigError(f"{where}: ${{{name}}} is not set in the environment; export {name}=... "
                              f"or write ${{{name}:-default}}", setting=where)
        return value

    return _REF.sub(one, text)


def expand_all(value: Any, env: Mapping[str, str], *, where: str) -> Any:
    """`value` (a string, or lists and dicts of them) with every string expanded (`expand`);
    dict keys are kept as written."""
    if isinstance(value, str):
        return expand(value, env, where=where)
    if isinstance(value, list):
        return [expand_all(item, env, where=where) for item in value]
    if isinstance(value, dict):
        return {key: expand_all(item, env, where=where) for key, item in value.items()}
    return value
