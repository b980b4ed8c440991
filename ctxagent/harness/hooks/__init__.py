"""Hooks: the user's own commands observing or blocking what the agent does, Claude Code's
configuration and protocol (docs/hooks.md)."""

from ctxagent.harness.hooks.config import EVENTS, HookRule, parse_hooks, read_hooks_file
from ctxagent.harness.hooks.decision import HookResult
from ctxagent.harness.hooks.dispatch import NO_HOOKS, Hooks

__all__ = ["EVENTS", "HookRule", "HookResult", "Hooks", "NO_HOOKS", "parse_hooks", "read_hooks_file"]
