"""`--backend ray`: each task a Ray task (`pip install 'ctxagent[ray]'`); ray is imported here only.

The driver connects to `address` ("auto", "HOST:PORT", "ray://HOST:PORT") or starts a
local cluster for the run (num_cpus = workers, stopped at the end). It keeps `workers`
tasks in flight (default: the cluster's CPUs / `num_cpus`), each reserving `num_cpus`.
Ray's own retries are off: a task whose worker died (WorkerCrashedError, a lost node) is
resubmitted by the driver until `retries` are spent, so every retry is reported. Results
stream back with `ray.wait`; Ctrl-C cancels the running tasks (KeyboardInterrupt in them).
"""

from __future__ import annotations

import collections
import dataclasses
import os
from typing import Any

from ctxagent.batch.backends.events import Report, lost
from ctxagent.batch.tasks import Task
from ctxagent.batch.worker import RunOptions
from ctxagent.batch.workspace import remove_leftovers
from ctxagent.errors import BatchError


def run_remote(task: dict[str, Any], options: dict[str, Any], env: dict[str, str]) -> dict[str, Any]:
    """The body of one Ray task: `run_task` with the driver's model variables over the node's environment."""
    from ctxagent.batch.worker import run_task

    return run_task(task, options, {**os.environ, **env})


def model_env() -> dict[str, str]:
    """The driver's variables a node needs to reach the model: CTXAGENT_* and *_API_KEY."""
    return {k: v for k, v in os.environ.items() if k.startswith("CTXAGENT_") or k.endswith("_API_KEY")}


class RayBackend:
    """Ray tasks; `workers` in flight (None: from the cluster), `retries` after a worker death,
    `address` of a cluster (None: a local one for the run), `num_cpus` per task."""

    def __init__(self, workers: int | None = None, *, retries: int = 1, address: str | None = None,
                 num_cpus: float = 1.0) -> None:
        self.workers, self.retries, self.address, self.num_cpus = workers, retries, address, num_cpus

    def run(self, tasks: list[Task], options: RunOptions, report: Report) -> None:
        """Run every task; see `ctxagent.batch.backends.events.Backend`."""
        ray = _import_ray()
        owned = self._connect(ray)
        if not owned:  # the nodes' own temporary folders: DIR may not exist there
            options = dataclasses.replace(options, work_root=None)
        try:
            self._check_fits(ray)
            window = self.workers or max(1, int(ray.cluster_resources().get("CPU", 1) // self.num_cpus))
            remote = ray.remote(num_cpus=self.num_cpus, max_retries=0)(run_remote)
            _Scheduler(ray, remote, options, report, self.retries, window).run(tasks)
        finally:
            if owned:
                ray.shutdown()

    def _check_fits(self, ray: Any) -> None:
        """BatchError when no node has `num_cpus` CPUs: Ray would wait for one for ever."""
        largest = max((n.get("Resources", {}).get("CPU", 0) for n in ray.nodes() if n.get("Alive")), default=0)
        if self.num_cpus > largest:
            raise BatchError(f"each task reserves --num-cpus {self.num_cpus:g} but the largest node of the Ray "
                             f"cluster has {largest:g} CPUs, so no task could start; lower --num-cpus")

    def _connect(self, ray: Any) -> bool:
        """Connect (True: a cluster started here, to stop at the end). Raises BatchError."""
        if ray.is_initialized():
            return False
        try:
            if self.address:
                ray.init(address=self.address, log_to_driver=False, logging_level="ERROR")
                return False
            ray.init(num_cpus=max(self.workers or (os.cpu_count() or 1), 1), include_dashboard=False,
                     log_to_driver=False, logging_level="ERROR")
            return True
        except (ConnectionError, ValueError, RuntimeError) as exc:
            where = self.address or "a local cluster"
            raise BatchError(f"cannot start Ray ({where}): {exc}; check --ray-address (auto, HOST:PORT or "
                             "ray://HOST:PORT)") from exc


class _Scheduler:
    """The driver's loop over Ray object refs: submit, wait, retry, drain on Ctrl-C."""

    def __init__(self, ray: Any, remote: Any, options: RunOptions, report: Report, retries: int, window: int) -> None:
        self.ray, self.remote, self.options, self.report = ray, remote, options, report
        self.retries, self.window = retries, window
        self.env = model_env()
        self.running: dict[Any, tuple[Task, int]] = {}
        self.stopping = False

    def run(self, tasks: list[Task]) -> None:
        pending = collections.deque((task, 1) for task in tasks)
        try:
            while pending or self.running:
                while pending and len(self.running) < self.window:
                    self._submit(*pending.popleft())
                ready, _ = self.ray.wait(list(self.running), num_returns=1)
                for ref in ready:
                    self._collect(ref, pending)
        except KeyboardInterrupt:
            pending.clear()
            self._drain()
            raise

    def _submit(self, task: Task, attempt: int) -> None:
        ref = self.remote.remote(task.to_dict(), self.options.to_dict(), self.env)
        self.running[ref] = (task, attempt)
        self.report("started", id=task.id, attempt=attempt, pid=None)

    def _collect(self, ref: Any, pending: collections.deque) -> None:
        task, attempt = self.running.pop(ref)
        exceptions = self.ray.exceptions
        try:
            result = self.ray.get(ref)
        except exceptions.TaskCancelledError:
            result = {**lost(task.id, attempt, "cancelled"), "status": "interrupted"}
        except exceptions.RayError as exc:
            remove_leftovers(self.options.work_root, task.id)
            why = f"the Ray worker died ({type(exc).__name__})"
            if self.stopping:
                result = {**lost(task.id, attempt, why), "status": "interrupted"}
            elif attempt <= self.retries:
                self.report("retry", id=task.id, attempt=attempt + 1, reason=why)
                pending.appendleft((task, attempt + 1))
                return
            else:
                result = lost(task.id, attempt, why)
        self.report("result", result={**result, "attempts": attempt})

    def _drain(self) -> None:
        """Ctrl-C: cancel what runs (KeyboardInterrupt inside), wait for each (a second Ctrl-C stops waiting)."""
        self.stopping = True
        for ref in self.running:
            self.ray.cancel(ref, force=False)
        try:
            while self.running:
                ready, _ = self.ray.wait(list(self.running), num_returns=1)
                for ref in ready:
                    self._collect(ref, collections.deque())
        except KeyboardInterrupt:
            for ref in self.running:
                self.ray.cancel(ref, force=True)


def _import_ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise BatchError("the ray backend needs Ray: pip install 'ctxagent[ray]'") from exc
    return ray
