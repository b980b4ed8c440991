"""`[state]`: how long sessions are kept and what a new session carries over (docs/state.md).

Retention: at the start of a new session, the sessions (transcript and snapshots) older
than `prune_older_than_days` are removed, except the `prune_keep` newest; `ctxagent
sessions prune` does the same on demand. Carry-over: todo items and notes last changed
more than `carry_over_max_age_days` before a session started are not injected into it.
"""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta

from ctxagent.validation import Record


class StateSettings(Record):
    """Retention of sessions and carry-over of the todo board and notes between sessions."""

    prune_older_than_days: Annotated[float, Meta(ge=0, le=36_500)] = 30.0
    """Sessions last used more than this many days ago are removed when a new session starts (0: never)."""
    prune_keep: Annotated[int, Meta(ge=0, le=1_000_000)] = 20
    """The newest sessions kept whatever their age (0: none kept on account of being recent)."""
    carry_over_max_age_days: Annotated[float, Meta(ge=0, le=36_500)] = 7.0
    """Todo items and notes unchanged for longer than this are not injected into a new session (0: none are)."""
