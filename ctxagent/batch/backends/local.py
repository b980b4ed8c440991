"""`--backend local`: a pool of worker subprocesses (`ctxagent.batch.worker_main`) on this machine.

Each worker runs one task at a time and stays for the next (imports paid once). A worker
that dies mid-task (killed, out of memory) is seen at the end of its output pipe: its task
goes back to the front of the queue until `retries` are spent, and a new worker takes its
place. Workers run in their own session, so a terminal's Ctrl-C reaches only the driver,
which then stops scheduling and sends each busy worker SIGINT (its turn ends cleanly).
"""

from __future__ import annotations

import collections
import json
import os
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Any

from ctxagent.batch.backends.events import Report, lost
from ctxagent.batch.tasks import Task
from ctxagent.batch.worker import RunOptions
from ctxagent.batch.workspace import remove_leftovers


class _Worker:
    """One worker process; its output lines (and its exit) go to `events` as (worker, message)."""

    def __init__(self, events: queue.Queue, log: IO[bytes]) -> None:
        env = {**os.environ, "CTXAGENT_BATCH_DRIVER": str(os.getpid())}
        self.proc = subprocess.Popen([sys.executable, "-m", "ctxagent.batch.worker_main"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=log, env=env, start_new_session=True)
        self.job: tuple[Task, int] | None = None
        self.reader = threading.Thread(target=self._read, args=(events,), daemon=True, name=f"worker-{self.proc.pid}")
        self.reader.start()

    def _read(self, events: queue.Queue) -> None:
        for line in self.proc.stdout:  # type: ignore[union-attr]
            try:
                events.put((self, json.loads(line)))
            except ValueError:
                continue
        events.put((self, {"event": "exit", "code": self.proc.wait()}))

    def send(self, task: Task, attempt: int, options: RunOptions) -> None:
        self.job = (task, attempt)
        request = {"task": task.to_dict(), "options": options.to_dict()}
        try:
            self.proc.stdin.write(json.dumps(request).encode() + b"\n")  # type: ignore[union-attr]
            self.proc.stdin.flush()  # type: ignore[union-attr]
        except OSError:
            pass  # it died already: its exit event follows

    def signal(self, number: int) -> None:
        try:
            os.kill(self.proc.pid, number)
        except OSError:
            pass

    def close(self) -> None:
        try:
            self.proc.stdin.close()  # type: ignore[union-attr]
        except OSError:
            pass


class LocalBackend:
    """`workers` processes (default: the machine's cores); `retries`: extra attempts of a task
    whose worker died; `log`: the file workers' stderr goes to (None: discarded)."""

    def __init__(self, workers: int | None = None, *, retries: int = 1, log: Path | None = None) -> None:
        self.workers = workers or os.cpu_count() or 1
        self.retries = retries
        self.log = log
        self.work_root: str | None = None

    def run(self, tasks: list[Task], options: RunOptions, report: Report) -> None:
        """Run every task; see `ctxagent.batch.backends.events.Backend`."""
        pending = collections.deque((task, 1) for task in tasks)
        events: queue.Queue = queue.Queue()
        log = open(self.log, "ab") if self.log else subprocess.DEVNULL  # noqa: SIM115 - closed below
        pool: list[_Worker] = []
        try:
            pool = [_Worker(events, log) for _ in range(min(self.workers, len(tasks)))]  # type: ignore[arg-type]
            self._loop(pool, pending, events, options, report, log)
        except KeyboardInterrupt:
            pending.clear()
            self._stop(pool, events, report)
            raise
        finally:
            try:
                for worker in pool:
                    worker.close()
                for worker in pool:
                    _reap(worker)
            except KeyboardInterrupt:  # another Ctrl-C while they end: kill them, wait no more
                for worker in pool:
                    worker.signal(signal.SIGKILL)
                for worker in pool:
                    _reap(worker)
                raise
            finally:
                if log is not subprocess.DEVNULL:
                    log.close()  # type: ignore[union-attr]

    def _loop(self, pool: list[_Worker], pending: collections.deque, events: queue.Queue, options: RunOptions,
              report: Report, log: Any) -> None:
        self.work_root = options.work_root
        while pending or any(w.job for w in pool):
            for worker in pool:
                if worker.job is None and pending:
                    worker.send(*pending.popleft(), options)
            worker, message = events.get()
            if message["event"] == "started":
                report("started", id=message["id"], attempt=worker.job[1] if worker.job else 1, pid=message["pid"])
            elif message["event"] == "result":
                attempt = worker.job[1] if worker.job else 1
                worker.job = None
                report("result", result={**message["result"], "attempts": attempt})
            elif message["event"] == "exit":
                pool.remove(worker)
                self._lost(worker, message["code"], pending, report)
                if pending:
                    pool.append(_Worker(events, log))

    def _lost(self, worker: _Worker, code: int | None, pending: collections.deque, report: Report) -> None:
        """A worker ended: its task (if any) is retried or reported as crashed."""
        if worker.job is None:
            return
        task, attempt = worker.job
        worker.job = None
        remove_leftovers(self.work_root, task.id)
        why = f"the worker died ({_how(code)})"
        if attempt <= self.retries:
            report("retry", id=task.id, attempt=attempt + 1, reason=why)
            pending.appendleft((task, attempt + 1))
        else:
            report("result", result=lost(task.id, attempt, why))

    def _stop(self, pool: list[_Worker], events: queue.Queue, report: Report) -> None:
        """Ctrl-C: SIGINT to each busy worker, then wait for their results (a second Ctrl-C kills them)."""
        busy = [w for w in pool if w.job]
        for worker in busy:
            worker.signal(signal.SIGINT)
        try:
            while any(w.job for w in busy):
                worker, message = events.get()
                if message["event"] == "result" and worker.job:
                    attempt = worker.job[1]
                    worker.job = None
                    report("result", result={**message["result"], "attempts": attempt})
                elif message["event"] == "exit":
                    worker.job = None
        except KeyboardInterrupt:
            for worker in busy:
                worker.signal(signal.SIGKILL)


def _how(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"exit {code}"


def _reap(worker: _Worker) -> None:
    try:
        worker.proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        worker.signal(signal.SIGKILL)
        worker.proc.wait()
    worker.reader.join(timeout=30)
    worker.proc.stdout.close()  # type: ignore[union-attr]
