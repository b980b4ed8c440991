"""What a backend tells the driver, and how a worker's death becomes a retry or a result.

`Report` is the driver's callback: `report(kind, **fields)` with kind "started" (id,
attempt, pid or None), "retry" (id, attempt: the next one, reason) or "result" (result:
the worker's dict plus "attempts"). Backends never write files.
"""

from __future__ import annotations

from typing import Any, Callable, Protocol

from ctxagent.batch.tasks import Task
from ctxagent.batch.worker import RunOptions

Report = Callable[..., None]


class Backend(Protocol):
    """Runs tasks and reports; on Ctrl-C it stops scheduling, lets running tasks stop
    (reported as status "interrupted"), then raises KeyboardInterrupt again."""

    def run(self, tasks: list[Task], options: RunOptions, report: Report) -> None: ...


def lost(task_id: str, attempts: int, reason: str) -> dict[str, Any]:
    """The result of a task whose every attempt died with its worker."""
    return {"id": task_id, "status": "crashed", "reason": f"{reason} ({attempts} attempts)", "steps": 0,
            "tokens": 0, "cached_tokens": 0, "cost_usd": None, "diff": "", "test": None, "model": None,
            "transcript": "", "wall_time_s": 0.0, "attempts": attempts}
