"""Run ONE batch task: working copy, setup, the same agent `ctxagent run` uses
(`ctxagent.agent.runtime.open_agent`, one turn), diff, test, copy removed.

`run_task` returns the result dict both backends send to the driver (which alone writes
files): id, status (the turn's end reason, or setup_failed / error / interrupted), exit
reason, steps, tokens, cached tokens, cost, wall time, diff, test outcome, model, and the
session transcript's text (the driver stores it under DIR/sessions/).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Mapping

from ctxagent.batch.commands import run_command
from ctxagent.batch.tasks import Task
from ctxagent.batch.workspace import WorkingCopy
from ctxagent.errors import CtxAgentError
from ctxagent.redaction import redact
from ctxagent.validation import validate


@dataclass(frozen=True)
class RunOptions:
    """What every task of a batch shares (a task's own fields win): the flags of `ctxagent run`
    (None = configured value), the parent folder of working copies, the batch's output folder
    (`out`: never copied into a copy), command timeouts (s)."""

    yes: bool = False
    mode: str | None = None
    allow_exec: bool | None = None
    model: str | None = None
    base_url: str | None = None
    provider: str | None = None
    protocol: str | None = None
    max_steps: int | None = None
    timeout_s: float | None = None
    trust_repo: bool = False
    work_root: str | None = None
    out: str | None = None
    command_timeout_s: float = 900.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def run_task(task: Task | Mapping[str, Any], options: RunOptions | Mapping[str, Any],
             env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Run `task` to its end and return its result dict (see the module docstring). `env`: the
    environment settings are read from (default os.environ; the Ray backend sends the
    driver's model variables). Never raises for the task's own failures; KeyboardInterrupt
    gives status "interrupted"."""
    task = task if isinstance(task, Task) else validate(Task, dict(task))
    options = options if isinstance(options, RunOptions) else RunOptions(**dict(options))
    started = time.monotonic()
    result: dict[str, Any] = {"id": task.id, "status": "error", "reason": "", "steps": 0, "tokens": 0,
                              "cached_tokens": 0, "cost_usd": None, "diff": "", "test": None, "model": None,
                              "transcript": ""}
    copy = None
    try:
        copy = WorkingCopy(task.repo, task.base_commit, parent=_parent(options), name=task.id,
                           exclude=Path(options.out) if options.out else None)
        _run_in(copy, task, options, env, result)
    except KeyboardInterrupt:
        result.update(status="interrupted", reason="interrupted before the task ended")
    except CtxAgentError as exc:  # redacted: a git URL's token, a key in an endpoint's message
        result.update(status="error", reason=redact(str(exc), _secrets(env)))
    except Exception as exc:  # noqa: BLE001 - one task's crash is its result, never the batch's
        result.update(status="error", reason=redact(f"{type(exc).__name__}: {exc}", _secrets(env)))
    finally:
        if copy is not None:
            copy.remove()
    result["wall_time_s"] = round(time.monotonic() - started, 3)
    return result


def _secrets(env: Mapping[str, str] | None) -> list[str]:
    """The API keys of the environment settings are read from (values of *_API_KEY)."""
    import os

    return [v for k, v in (os.environ if env is None else env).items() if k.endswith("_API_KEY")]


def _parent(options: RunOptions) -> Path | None:
    return Path(options.work_root) if options.work_root else None


def _run_in(copy: WorkingCopy, task: Task, options: RunOptions, env: Mapping[str, str] | None,
            result: dict[str, Any]) -> None:
    timeout = options.command_timeout_s
    if task.setup:
        setup = run_command(task.setup, copy.path, timeout=timeout)
        result["setup"] = setup
        if not setup["passed"]:
            result.update(status="setup_failed", reason=_why_failed("setup", setup, timeout))
            return
        copy.settle()  # what the setup line made (a virtualenv, build files) is not the task's diff
    _run_agent(copy, task, options, env, result)
    if result["status"] == "interrupted":
        return  # unfinished: the driver records nothing and a rerun runs it again
    result["diff"] = copy.diff()
    if task.test:
        result["test"] = run_command(task.test, copy.path, timeout=timeout)


def _why_failed(what: str, done: dict[str, Any], timeout: float) -> str:
    if done["timed_out"]:
        return f"{what} timed out after {timeout:g} s (--command-timeout)"
    if done["exit_code"] is None:
        return f"{what} did not run: {done['output']}"
    return f"{what} exited {done['exit_code']}"


def _run_agent(copy: WorkingCopy, task: Task, options: RunOptions, env: Mapping[str, str] | None,
               result: dict[str, Any]) -> None:
    """One turn of the agent `ctxagent run` uses, non-interactive: nobody to ask, so a patch
    is applied only with `yes`, a command only with `allow_exec` (docs/batch.md, "Approval")."""
    from ctxagent.agent.events import UsageEvent
    from ctxagent.agent.runtime import open_agent
    from ctxagent.config.settings import load_settings

    flags = {"model": task.model or options.model, "base_url": options.base_url, "provider": options.provider,
             "protocol": options.protocol, "max_steps": task.max_steps or options.max_steps,
             "max_task_tokens": task.max_task_tokens, "max_cost_usd": task.max_cost_usd,
             "wall_time_s": task.timeout_s or options.timeout_s, "yes": options.yes,
             "mode": task.mode or options.mode, "allow_exec": options.allow_exec}
    settings = load_settings(copy.path, flags, env, trust_repo=options.trust_repo)
    cached = [0]

    def count_cached(event: Any) -> None:
        if isinstance(event, UsageEvent):
            cached[0] += event.cached_tokens

    with open_agent(copy.path, settings, sinks=[count_cached], ask=None, fresh=True, cwd=copy.path) as agent:
        try:
            end = agent.run_turn(task.task)
        finally:
            result["transcript"] = _read(agent.session.path)
    result.update(status=end.reason, reason=redact(end.message or "", settings.secrets()), steps=end.steps,
                  tokens=end.tokens, cached_tokens=cached[0], cost_usd=end.cost_usd, model=settings.model.model)


def _read(path: Path) -> str:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
