"""What a batch shows while it runs: a live rich table on a terminal, one line per event
elsewhere. Counts: done / running / failed / left, tokens and cost so far, ETA (the mean
wall time of the tasks finished in this run, times what is left, over the workers).
"""

from __future__ import annotations

import time
from typing import IO, Any

from rich.console import Console
from rich.live import Live
from rich.text import Text

from ctxagent.shell.output import escape_controls


class Progress:
    """A driver sink (`ctxagent.batch.driver.Sink`); `stream` default stderr; `workers` for the ETA.
    Use as a context manager (the live display ends on exit)."""

    def __init__(self, *, workers: int, stream: IO[str] | None = None) -> None:
        self.console = Console(file=stream, stderr=stream is None, highlight=False)
        self.workers = max(1, workers)
        self.running: dict[str, float] = {}
        self.counts = {"to_run": 0, "done": 0, "failed": 0, "skipped": 0, "tokens": 0, "cost": 0.0, "retries": 0}
        self._started = time.monotonic()
        self._live = Live(console=self.console, refresh_per_second=4, transient=False) \
            if self.console.is_terminal else None

    def __enter__(self) -> Progress:
        if self._live is not None:
            self._live.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.update(self.render())
            self._live.stop()

    def __call__(self, event: dict[str, Any]) -> None:
        kind = event["event"]
        if kind == "start":
            self.counts.update(to_run=event["to_run"], skipped=event["skipped"])
            self._started = time.monotonic()
        elif kind == "started":
            self.running[event["id"]] = time.monotonic()
        elif kind == "retry":
            self.running.pop(event["id"], None)
            self.counts["retries"] += 1
        elif kind == "done":
            self._done(event)
        self._show(event)

    def _done(self, event: dict[str, Any]) -> None:
        self.running.pop(event["id"], None)
        if event.get("recorded"):
            self.counts["done"] += 1
            self.counts["failed"] += event.get("status") != "finished"
            self.counts["tokens"] += event.get("tokens") or 0
            self.counts["cost"] += event.get("cost_usd") or 0.0

    def _show(self, event: dict[str, Any]) -> None:
        if self._live is not None:
            self._live.update(self.render())
        elif event["event"] in ("start", "retry", "done", "end"):
            self.console.print(Text(line_for(event)), soft_wrap=True)

    def render(self) -> Text:
        """The status line: counts, tokens, cost, ETA."""
        c = self.counts
        left = max(0, c["to_run"] - c["done"] - len(self.running))
        eta = self.eta()
        text = (f"batch: {c['done']}/{c['to_run']} done · {len(self.running)} running · {c['failed']} failed · "
                f"{left} waiting · {c['skipped']} skipped · {c['tokens']:,} tokens · ${c['cost']:.4f}"
                + (f" · ETA {eta:.0f} s" if eta is not None else ""))
        return Text(text)

    def eta(self) -> float | None:
        """Seconds until the end, from this run's pace; None before the first task ends."""
        done = self.counts["done"]
        if not done:
            return None
        per_task = (time.monotonic() - self._started) / done
        return per_task * max(0, self.counts["to_run"] - done)


def line_for(event: dict[str, Any]) -> str:
    """One plain line for an event (the non-terminal display)."""
    kind = event["event"]
    if kind == "start":
        return f"batch: {event['to_run']} to run, {event['skipped']} already recorded"
    if kind == "retry":
        return f"retry {event['id']} (attempt {event['attempt']}): {escape_controls(str(event.get('reason', '')))}"
    if kind == "end":
        return (f"batch: {event['done']} recorded, {event['failed']} failed, {event['interrupted']} interrupted, "
                f"{event['tokens']:,} tokens, ${event['cost_usd']:.4f}, {event.get('wall_time_s', 0):.1f} s")
    state = "" if event.get("recorded") else " (not recorded: runs again next time)"
    return (f"{event['id']}: {event['status']}{state} · {event.get('steps') or 0} steps · "
            f"{event.get('diff_lines', 0)} diff lines · {event.get('wall_time_s') or 0:.1f} s")
