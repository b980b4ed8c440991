"""The output folder of a batch: results.jsonl, preds.jsonl, sessions/, one driver at a time.

results.jsonl: one line per finished task, appended and fsynced in one write (a SIGKILL
loses at most the line being written, which readers skip). preds.jsonl: SWE-bench's
predictions (`instance_id`, `model_name_or_path`, `model_patch`), one line per id (a
retried id's line is replaced by rewriting the file atomically). The driver alone
writes here; `BatchLock` keeps a second driver out. Reference: docs/batch.md.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ctxagent.errors import BatchError
from ctxagent.storage.files import append_jsonl, atomic_write_bytes, atomic_write_text, read_jsonl

RESULTS, PREDS, SESSIONS, LOCK = "results.jsonl", "preds.jsonl", "sessions", ".batch.lock"
#: The status of a task that ran to its end; any other recorded status is a failure (--retry-failed).
FINISHED = "finished"


class ResultsDir:
    """The output folder `out` (created). `recorded()`: id -> its latest result line."""

    def __init__(self, out: Path) -> None:
        self.out = Path(out)
        try:
            self.out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise BatchError(f"cannot create the output folder {out}: {exc.strerror or exc}") from exc
        self.results, self.preds = self.out / RESULTS, self.out / PREDS
        self._pred_ids = {p.get("instance_id") for p in self._read(self.preds)}

    def lock(self) -> Any:
        """An exclusive lock on the folder for the driver's lifetime; BatchError if another holds it."""
        from filelock import FileLock, Timeout

        lock = FileLock(str(self.out / LOCK), timeout=0)
        try:
            lock.acquire()
        except Timeout:
            raise BatchError(f"another `ctxagent batch` is writing to {self.out}; wait for it or use another --out") \
                from None
        return lock

    def recorded(self) -> dict[str, dict[str, Any]]:
        """Every recorded task id -> its latest result line (a torn last line is skipped)."""
        return {r["id"]: r for r in self._read(self.results) if isinstance(r.get("id"), str)}

    def to_run(self, ids: list[str], *, retry_failed: bool) -> list[str]:
        """The ids of `ids` still to run: never recorded, or (retry_failed) last recorded as failed."""
        done = self.recorded()
        return [i for i in ids if i not in done or (retry_failed and done[i].get("status") != FINISHED)]

    def record(self, result: dict[str, Any], *, model_name: str) -> dict[str, Any]:
        """Store one finished task: its transcript under sessions/, its results line, its
        prediction; returns the results line (the transcript replaced by `session_path`)."""
        line = {k: v for k, v in result.items() if k != "transcript"}
        transcript = result.get("transcript") or ""
        if transcript:
            path = self.out / SESSIONS / f"{result['id']}.jsonl"
            path.parent.mkdir(exist_ok=True)
            atomic_write_text(path, transcript)
            line["session_path"] = str(path)
        else:
            line["session_path"] = None
        append_jsonl(self.results, line)
        self._predict(result["id"], model_name, result.get("diff") or "")
        return line

    def _predict(self, task_id: str, model_name: str, patch: str) -> None:
        pred = {"instance_id": task_id, "model_name_or_path": model_name, "model_patch": patch}
        if task_id not in self._pred_ids:
            append_jsonl(self.preds, pred)
            self._pred_ids.add(task_id)
            return
        kept = [p for p in self._read(self.preds) if p.get("instance_id") != task_id] + [pred]
        atomic_write_bytes(self.preds, b"".join(json.dumps(p).encode() + b"\n" for p in kept))

    @staticmethod
    def _read(path: Path) -> list[dict[str, Any]]:
        return [r for r in read_jsonl(path) if isinstance(r, dict)] if path.exists() else []
