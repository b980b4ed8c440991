"""The batch driver: tasks to run (resume), a backend, and the only writer of the results.

`run_batch` skips ids already recorded in DIR/results.jsonl (all failures too, unless
`retry_failed`), runs the rest on the backend, records each result as it arrives (an
"interrupted" one is not finished: it stays for the next run) and passes every event to
`sink` (the progress display, `--json`). Ctrl-C: KeyboardInterrupt after what finished
is recorded.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable

from ctxagent.batch.backends.events import Backend
from ctxagent.batch.results import ResultsDir, preds_name, task_digest
from ctxagent.batch.tasks import Task
from ctxagent.batch.worker import RunOptions

#: `sink(event)`: event a dict with "event" (start, started, retry, done, end) and its fields.
Sink = Callable[[dict[str, Any]], None]


def run_batch(tasks: list[Task], out: Path, backend: Backend, options: RunOptions, *, sink: Sink,
              retry_failed: bool = False) -> dict[str, Any]:
    """Run what is left of `tasks` into `out`; returns the end event's counts (total, skipped,
    done, failed, interrupted, tokens, cost_usd, wall_time_s; unfinished: tasks of the file not
    recorded as finished, this run's or earlier). Raises BatchError (folder in
    use) and KeyboardInterrupt (Ctrl-C, after the drain)."""
    results = ResultsDir(out)
    with results.lock():
        digests = {t.id: task_digest(t) for t in tasks}
        results.check_same(digests)
        results.reconcile()
        todo = set(results.to_run([t.id for t in tasks], retry_failed=retry_failed))
        work = [t for t in tasks if t.id in todo]
        counts = {"total": len(tasks), "skipped": len(tasks) - len(work), "to_run": len(work), "done": 0,
                  "failed": 0, "interrupted": 0, "tokens": 0, "cost_usd": 0.0}
        started = time.monotonic()
        sink({"event": "start", **counts})
        options = _with_work_root(options, Path(out))
        report = _Recorder(results, counts, sink, digests, model=options.model)
        try:
            if work:
                backend.run(work, options, report)
        finally:
            counts["wall_time_s"] = round(time.monotonic() - started, 3)
            recorded = results.recorded()
            counts["unfinished"] = sum(recorded.get(t.id, {}).get("status") != "finished" for t in tasks)
            sink({"event": "end", **counts})
    return counts


def _with_work_root(options: RunOptions, out: Path) -> RunOptions:
    """Working copies under DIR/.work unless set (a killed run's leftovers are removed here);
    `out` set, so that a copy of a folder holding DIR leaves DIR out."""
    import dataclasses
    import shutil

    options = dataclasses.replace(options, out=str(out.resolve()))
    if options.work_root:
        return options
    root = out.resolve() / ".work"  # absolute: a worker may run in another folder
    shutil.rmtree(root, ignore_errors=True)
    return dataclasses.replace(options, work_root=str(root))


class _Recorder:
    """The backends' `report` callback: records results, keeps the counts, feeds the sink."""

    def __init__(self, results: ResultsDir, counts: dict[str, Any], sink: Sink, digests: dict[str, str], *,
                 model: str | None) -> None:
        self.results, self.counts, self.sink, self.digests = results, counts, sink, digests
        # a task that failed before its model was known is named after the batch's (the harness
        # names its report after the first prediction's model_name_or_path)
        self.model = model or next((r["model"] for r in reversed(list(results.recorded().values()))
                                    if r.get("model")), None)

    def __call__(self, kind: str, **fields: Any) -> None:
        if kind != "result":
            self.sink({"event": kind, **fields})
            return
        result = fields["result"]
        if result.get("status") == "interrupted":
            self.counts["interrupted"] += 1
            self.sink({"event": "done", **_brief(result), "recorded": False})
            return
        result = {**result, "task_digest": self.digests.get(result["id"])}
        self.model = result.get("model") or self.model
        line = self.results.record(result, model_name=model_name({"model": result.get("model") or self.model}))
        self.counts["done"] += 1
        self.counts["failed"] += line.get("status") != "finished"
        self.counts["tokens"] += line.get("tokens") or 0
        self.counts["cost_usd"] += line.get("cost_usd") or 0.0
        self.sink({"event": "done", **_brief(line), "recorded": True})


def model_name(result: dict[str, Any]) -> str:
    """`model_name_or_path` of a prediction: "ctxagent__<model>" ("/" would make folders in the harness's logs)."""
    return preds_name({"model": result.get("model")})


def _brief(result: dict[str, Any]) -> dict[str, Any]:
    keep = ("id", "status", "reason", "steps", "tokens", "cached_tokens", "cost_usd", "wall_time_s", "attempts")
    brief = {k: result.get(k) for k in keep}
    brief["diff_lines"] = len((result.get("diff") or "").splitlines())
    brief["test_passed"] = (result.get("test") or {}).get("passed")
    return brief
