"""`[exec]`: how approved commands and python_exec run (docs/exec.md).

The permission mode itself is `[agent] mode`; `[agent] approval = "never"` (or the
`--allow-exec` flag) runs commands and code without asking. A repository's own config
that is not trusted may only add deny rules, lower the timeout and output cap, and turn
the network off (`ctxagent.config.trust`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ctxagent.errors import ConfigError

if TYPE_CHECKING:
    from ctxagent.exec.gate import ExecPolicy


class ExecSettings(BaseModel):
    """Rules, sandbox and limits of approved commands and python_exec."""

    model_config = ConfigDict(defer_build=True, extra="forbid", allow_inf_nan=False, strict=True)

    allow: list[str] = Field(default_factory=list)
    """Commands run without asking, matched on the parsed argv, e.g. ["pytest *", "ruff check *"]."""
    deny: list[str] = Field(default_factory=list)
    """Commands refused without asking (deny wins), e.g. ["git push *", "curl *"]."""
    timeout_s: float = Field(120.0, gt=0, le=86_400)
    """Seconds a command or python_exec run may take before its process group is killed; (0, 86400]."""
    max_output_bytes: int = Field(32_768, gt=0, le=10_000_000)
    """Bytes of stdout and of stderr kept (head and tail) for the model; 1 to 10^7."""
    network: bool = False
    """Let sandboxed runs use the network."""
    sandbox: Literal["auto", "off", "required"] = "auto"
    """"auto": bubblewrap when it works, else unsandboxed (said in the prompt); "off"; "required": refuse without it."""
    env_passthrough: list[str] = Field(default_factory=list)
    """Environment variable names passed to runs (everything else is scrubbed)."""
    python: str = ""
    """Interpreter for python_exec (default: the repository's .venv/venv, else ctxagent's own)."""

    @field_validator("allow", "deny")
    @classmethod
    def _rules_parse(cls, value: list[str], info) -> list[str]:  # type: ignore[no-untyped-def]
        """Each rule is one plain command (`ctxagent.exec.rules.parse_rule`)."""
        from ctxagent.exec.rules import parse_rule  # the shell parser only when there are rules

        for text in value:
            try:
                parse_rule(text, setting=f"exec.{info.field_name}")
            except ConfigError as exc:
                raise ValueError(str(exc)) from None
        return value

    def policy(self, mode: str) -> ExecPolicy:
        """The plain `ExecPolicy` the exec package works with, for permission `mode`."""
        from ctxagent.exec.gate import ExecPolicy
        from ctxagent.exec.rules import PermissionRules

        return ExecPolicy(mode=mode, rules=PermissionRules.from_text(self.allow, self.deny),  # type: ignore[arg-type]
                          sandbox=self.sandbox, network=self.network, timeout_s=self.timeout_s,
                          max_output_bytes=self.max_output_bytes, env_passthrough=tuple(self.env_passthrough),
                          python=self.python)
