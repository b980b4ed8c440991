"""`[exec]`: how approved commands and python_exec run (docs/exec.md).

The permission mode itself is `[agent] mode`; `[agent] approval = "never"` (or the
`--allow-exec` flag) runs commands and code without asking. A repository's own config
that is not trusted may only add deny rules, lower the timeout and output cap, and turn
the network off (`ctxagent.config.trust`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

import msgspec
from msgspec import Meta

from ctxagent.errors import ConfigError
from ctxagent.validation import Record

if TYPE_CHECKING:
    from ctxagent.exec.gate import ExecPolicy


class ExecSettings(Record):
    """Rules, sandbox and limits of approved commands and python_exec."""

    allow: list[str] = msgspec.field(default_factory=list)
    """Commands run without asking, matched on the parsed argv, e.g. ["pytest *", "ruff check *"]."""
    deny: list[str] = msgspec.field(default_factory=list)
    """Commands refused without asking (deny wins), e.g. ["git push *", "curl *"]."""
    timeout_s: Annotated[float, Meta(gt=0, le=86_400)] = 120.0
    """Seconds a command or python_exec run may take before its process group is killed; (0, 86400]."""
    max_output_bytes: Annotated[int, Meta(gt=0, le=10_000_000)] = 32_768
    """Bytes of stdout and of stderr kept (head and tail) for the model; 1 to 10^7."""
    network: bool = False
    """Let sandboxed runs use the network."""
    sandbox: Literal["auto", "off", "required"] = "auto"
    """"auto": bubblewrap when it works, else unsandboxed (said in the prompt); "off"; "required": refuse without it."""
    env_passthrough: list[str] = msgspec.field(default_factory=list)
    """Environment variable names passed to runs (everything else is scrubbed)."""
    python: str = ""
    """Interpreter for python_exec (default: the repository's .venv/venv, else ctxagent's own)."""

    def __post_init__(self) -> None:
        """Each rule of `allow` and `deny` is one plain command (`ctxagent.exec.rules.parse_rule`);
        raises ValueError "FIELD: rule ..." naming the list."""
        for name in ("allow", "deny"):
            rules = getattr(self, name)
            if not rules:
                continue
            from ctxagent.exec.rules import parse_rule  # the shell parser only when there are rules

            for text in rules:
                try:
                    parse_rule(text, setting=name)
                except ConfigError as exc:
                    raise ValueError(str(exc)) from None

    def policy(self, mode: str) -> ExecPolicy:
        """The plain `ExecPolicy` the exec package works with, for permission `mode`."""
        from ctxagent.exec.gate import ExecPolicy
        from ctxagent.exec.rules import PermissionRules

        return ExecPolicy(mode=mode, rules=PermissionRules.from_text(self.allow, self.deny),  # type: ignore[arg-type]
                          sandbox=self.sandbox, network=self.network, timeout_s=self.timeout_s,
                          max_output_bytes=self.max_output_bytes, env_passthrough=tuple(self.env_passthrough),
                          python=self.python)
