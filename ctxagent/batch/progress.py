"""What a batch shows while it runs: on a terminal a live status line (wrapped between its
items to the terminal's width) under one line per finished task; elsewhere one line per
event. Counts: done / running / failed / left, tokens and cost so far (unknown while no
task had prices), ETA (this run's pace times what is left).
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
        self.cost_known = False
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
            self.cost_known = self.cost_known or event.get("cost_usd") is not None

    def _show(self, event: dict[str, Any]) -> None:
        if self._live is not None:
            if event["event"] in ("retry", "done"):  # above the status line, where it stays
                self._live.console.print(Text(line_for(event)), soft_wrap=False)
            self._live.update(self.render())
        elif event["event"] in ("start", "retry", "done", "end"):
            if event["event"] == "end" and not self.cost_known:
                event = {**event, "cost_usd": None}  # 0.0 there means no task had prices
            self.console.print(Text(line_for(event)), soft_wrap=True)

    def render(self) -> Text:
        """The status line: counts, tokens, cost, ETA; broken between items, never inside one,
        when the terminal is narrower than the line."""
        c = self.counts
        left = max(0, c["to_run"] - c["done"] - len(self.running))
        eta = self.eta()
        items = [f"batch: {c['done']}/{c['to_run']} done", f"{len(self.running)} running", f"{c['failed']} failed",
                 f"{left} waiting", f"{c['skipped']} skipped", f"{c['tokens']:,} tokens",
                 f"${c['cost']:.4f}" if self.cost_known else "cost unknown"]
        if eta is not None:
            items.append(f"ETA {eta:.0f} s")
        return Text("\n".join(fit(items, self.console.width)))

    def eta(self) -> float | None:
        """Seconds until the end, from this run's pace; None before the first task ends."""
        done = self.counts["done"]
        if not done:
            return None
        per_task = (time.monotonic() - self._started) / done
        return per_task * max(0, self.counts["to_run"] - done)


def fit(items: list[str], width: int, sep: str = " · ") -> list[str]:
    """`items` joined by `sep` into lines of at most `width` characters, broken only between items."""
    lines: list[str] = []
    for item in items:
        if lines and len(lines[-1]) + len(sep) + len(item) <= width:
            lines[-1] += sep + item
        else:
            lines.append(item)
    return lines


def line_for(event: dict[str, Any]) -> str:
    """One plain line for an event (the non-terminal display)."""
    kind = event["event"]
    if kind == "start":
        return f"batch: {event['to_run']} to run, {event['skipped']} already recorded"
    if kind == "retry":
        return f"retry {event['id']} (attempt {event['attempt']}): {escape_controls(str(event.get('reason', '')))}"
    if kind == "end":
        return (f"batch: {event['done']} recorded, {event['failed']} failed, {event['interrupted']} interrupted, "
                f"{event['tokens']:,} tokens, {_cost(event.get('cost_usd'))}, {event.get('wall_time_s', 0):.1f} s")
    state = "" if event.get("recorded") else " (not recorded: runs again next time)"
    return (f"{event['id']}: {event['status']}{state} · {event.get('steps') or 0} steps · "
            f"{event.get('diff_lines', 0)} diff lines · {event.get('wall_time_s') or 0:.1f} s")


def _cost(cost: float | None) -> str:
    return "cost unknown" if cost is None else f"${cost:.4f}"
