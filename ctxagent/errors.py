"""The one exception hierarchy of ctxagent.

Every error a user or a library caller can see is a `CtxAgentError`. Messages say what
was wrong and what to do instead. Constructors have no side effects (no logging).
Tools never raise these out of `Tool.execute`; they come back as `ToolResult(ok=False)`.
"""

from __future__ import annotations


class CtxAgentError(Exception):
    """Base class of every error ctxagent raises on purpose."""


class ConfigError(CtxAgentError):
    """A setting is missing or invalid. The message names the setting and how to set it."""

    def __init__(self, message: str, *, setting: str | None = None) -> None:
        super().__init__(message)
        self.setting = setting


class ToolInputError(CtxAgentError):
    """A tool was called with arguments it cannot accept (wrong type, unknown action...)."""


class ToolRefusedError(CtxAgentError):
    """A tool refused an action on safety grounds (path outside the workspace, forbidden flag)."""


class PatchError(CtxAgentError):
    """A patch could not be parsed, located or applied. Nothing was written.

    Attributes: `path` (file the failure concerns, or None) and `hunk` (1-based hunk
    index within that file, or None).
    """

    def __init__(self, message: str, *, path: str | None = None, hunk: int | None = None) -> None:
        super().__init__(message)
        self.path = path
        self.hunk = hunk


class StorageError(CtxAgentError):
    """State under `.ctxagent/` could not be read or written."""


class NotFoundError(CtxAgentError):
    """A note, todo item, memory, session or other named object does not exist."""


class LLMError(CtxAgentError):
    """The model endpoint failed. Subclasses in `ctxagent.llm.errors` say how."""


class ContextOverflowError(CtxAgentError):
    """The irreducible part of a request (system, pinned task, current input) cannot fit."""


class ProtocolError(CtxAgentError):
    """The model broke its text protocol (XML, ReAct) too many times in a row: the turn ends."""


class BatchError(CtxAgentError):
    """A batch run cannot go on: a bad tasks file (the message names the line), an unusable
    repository or output folder, a backend that cannot start."""
