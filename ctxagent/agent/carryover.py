"""What a session carries over from earlier ones (the todo board, notes), said at its start.

A todo item or note last changed before the session started is *carried over*. It is
injected into the session's requests only while younger than `[state]
carry_over_max_age_days` (0: never), and not at all with `--fresh`; anything the session
itself changes is always injected. `carry_over` counts what is carried and left out,
`notice_text` says it in one line with the ways to drop it, `state_loader` is the
assembler's `load_state` that applies the cut. Reference: docs/notes-todo-plan.md.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Callable

from ctxagent.context.state.read import gather_state

OPEN = ("pending", "in_progress")
DAY_S = 86_400.0


@dataclass
class CarryOver:
    """What a session started at `started` (Unix s) carries: `items` (open todo item dicts
    from before it), `notes` (note dicts from before it), `cutoff` (changed before it: not
    injected), `left_out_items` / `left_out_notes` (open items and notes older than the cutoff)."""

    started: float
    cutoff: float
    items: list[dict] = field(default_factory=list)
    notes: list[dict] = field(default_factory=list)
    left_out_items: int = 0
    left_out_notes: int = 0


def epoch(stamp: Any) -> float | None:
    """Unix seconds of an ISO 8601 stamp (naive: local time); None when it is not one."""
    try:
        return datetime.fromisoformat(str(stamp)).timestamp()
    except (TypeError, ValueError):
        return None


def session_started(transcript: Path) -> float:
    """When the session of `transcript` started: its first record's `ts` (now when unreadable)."""
    try:
        with open(transcript, encoding="utf-8") as handle:
            first = json.loads(handle.readline() or "{}")
        return float(first.get("ts"))
    except (OSError, ValueError, TypeError):
        return time.time()


def cutoff_of(started: float, max_age_days: float, fresh: bool) -> float:
    """Items and notes changed before this (Unix s) are not injected."""
    return started if fresh or max_age_days <= 0 else started - max_age_days * DAY_S


def _changed(entry: dict) -> float:
    stamp = epoch(entry.get("updated_at")) or epoch(entry.get("created_at"))
    return stamp if stamp is not None else float("inf")  # no stamp: counts as new, never hidden


def carry_over(repo: Path, started: float, *, max_age_days: float, fresh: bool = False) -> CarryOver:
    """What the session of `repo` started at `started` carries over (see the module doc)."""
    state, _ = gather_state(repo)
    out = CarryOver(started=started, cutoff=cutoff_of(started, max_age_days, fresh))
    for item in state.get("todos") or []:
        when = _changed(item)
        if when >= started or item.get("status") not in OPEN:
            continue
        if when >= out.cutoff:
            out.items.append(item)
        else:
            out.left_out_items += 1
    for note in state.get("notes") or []:
        when = _changed(note)
        if when >= started:
            continue
        if when >= out.cutoff:
            out.notes.append(note)
        else:
            out.left_out_notes += 1
    return out


def _ago(seconds: float) -> str:
    for unit, size in (("day", DAY_S), ("hour", 3600.0), ("minute", 60.0)):
        if seconds >= size:
            n = int(seconds // size)
            return f"{n} {unit}{'s' if n > 1 else ''} ago"
    return "just now"


def notice_text(co: CarryOver, *, max_age_days: float, fresh: bool, now: float | None = None) -> str | None:
    """One line on what is carried over and how to drop it; None when nothing is carried or left out."""
    if not (co.items or co.notes or co.left_out_items or co.left_out_notes):
        return None
    now = time.time() if now is None else now
    parts = []
    if co.items:
        sessions = sorted({str(i.get("session")) for i in co.items if i.get("session")}, reverse=True)
        origin = f" from session {', '.join(sessions[:2])}" + (" and others" if len(sessions) > 2 else "") if sessions else ""
        newest = max(_changed(i) for i in co.items)
        parts.append(f"{len(co.items)} open todo item(s){origin}, last changed {_ago(now - newest)}")
    if co.notes:
        parts.append(f"{len(co.notes)} note(s), newest changed {_ago(now - max(_changed(n) for n in co.notes))}")
    head = "carried over into this session: " + " and ".join(parts) if parts else "nothing carried over"
    left = co.left_out_items + co.left_out_notes
    why = "--fresh" if fresh else f"older than [state] carry_over_max_age_days = {max_age_days:g}"
    tail = f"; {left} older item(s)/note(s) left out ({why})" if left else ""
    ways = ("" if not parts else ". Drop the board with /todo clear (or `ctxagent todo clear --all`), "
            "start without them with --fresh, or lower [state] carry_over_max_age_days")
    return head + tail + ways


def state_loader(cutoff: float) -> Callable[[Any, str], tuple[dict, list[str]]]:
    """`gather_state` without the todo items and notes changed before `cutoff` (Unix s)."""

    def load(repo: Any, query: str = "") -> tuple[dict, list[str]]:
        state, problems = gather_state(repo, query)
        for key in ("todos", "notes"):
            if key in state:
                kept = [e for e in state[key] if not isinstance(e, dict) or _changed(e) >= cutoff]
                if kept:
                    state[key] = kept
                else:
                    del state[key]
        return state, problems

    return load
