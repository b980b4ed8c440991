"""Task lines of `ctxagent batch TASKS.jsonl`: our fields, or SWE-bench's as they are.

One JSON object a line (blank lines skipped). Ours: id, repo, base_commit, task, setup,
test, model, max_steps, max_task_tokens, max_cost_usd, timeout_s, mode; unknown keys are
an error (a typo must not be ignored). A line with `instance_id` is SWE-bench's: its
`problem_statement` is the task, `owner/name` repos are cloned from GitHub, and its other
keys (patch, test_patch, FAIL_TO_PASS...) are ignored. Reference: docs/batch.md.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ctxagent.errors import BatchError

#: Ids name files (sessions/<id>.jsonl): letters, digits, `.`, `_`, `-` (SWE-bench's fit).
ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$")
_GITHUB_NAME = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
_SWE_BENCH_KEYS = {"instance_id", "repo", "base_commit", "problem_statement"}


class Task(BaseModel):
    """One task: where (`repo` a path or git URL, `base_commit`), what (`task`), how to check
    (`setup`, `test`: shell command lines) and its own limits (None: the batch's)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    id: str = Field(pattern=ID_PATTERN.pattern)
    repo: str = Field(min_length=1)
    task: str = Field(min_length=1)
    base_commit: str | None = None
    setup: str | None = None
    test: str | None = None
    model: str | None = None
    max_steps: int | None = Field(None, gt=0, le=10_000)
    max_task_tokens: int | None = Field(None, gt=0, le=1_000_000_000)
    max_cost_usd: float | None = Field(None, gt=0, le=10_000)
    timeout_s: float | None = Field(None, gt=0, le=86_400)
    mode: Literal["read-only", "workspace-write"] | None = None


def load_tasks(path: Path) -> list[Task]:
    """Every task of the JSONL file `path`, in order; relative repo paths are resolved against
    its folder. Raises BatchError naming the line and the field (bad JSON, missing or unknown
    field, duplicate id, a file that cannot be read)."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise BatchError(f"cannot read the tasks file {path}: {exc}") from exc
    tasks: list[Task] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        task = parse_task_line(line, where=f"{path} line {number}", base=path.parent)
        if task.id in seen:
            raise BatchError(f"{path} line {number}: id {task.id!r} is already used on line {seen[task.id]}; "
                             "every task needs its own id")
        seen[task.id] = number
        tasks.append(task)
    if not tasks:
        raise BatchError(f"{path} holds no task; write one JSON object a line, e.g. "
                         '{"id": "t1", "repo": "path/to/repo", "task": "fix the failing test"}')
    return tasks


def parse_task_line(line: str, *, where: str, base: Path) -> Task:
    """One line -> Task; `where` prefixes every error ("tasks.jsonl line 3"), `base` anchors relative paths."""
    try:
        raw = json.loads(line)
    except ValueError as exc:
        raise BatchError(f"{where}: not JSON ({exc.msg} at column {exc.colno}); write one JSON object a line") from exc
    if not isinstance(raw, dict):
        raise BatchError(f"{where}: a task is a JSON object, not {type(raw).__name__}")
    fields = _from_swe_bench(raw) if "instance_id" in raw else raw
    try:
        task = Task.model_validate(fields)
    except ValidationError as exc:
        raise BatchError(f"{where}: {_first_problem(exc)}") from None
    return task.model_copy(update={"repo": _resolve_repo(task.repo, base, swe_bench="instance_id" in raw)})


def _from_swe_bench(raw: dict[str, Any]) -> dict[str, Any]:
    """SWE-bench's instance fields as ours; its other keys are dropped (they are the benchmark's)."""
    fields = {"id": raw.get("instance_id"), "repo": raw.get("repo"), "task": raw.get("problem_statement")}
    if raw.get("base_commit") is not None:
        fields["base_commit"] = raw["base_commit"]
    ours = set(Task.model_fields) - {"id", "task"}
    fields.update({k: v for k, v in raw.items() if k in ours and k not in _SWE_BENCH_KEYS})
    return fields


def _first_problem(exc: ValidationError) -> str:
    error = exc.errors()[0]
    name = ".".join(str(p) for p in error["loc"]) or "the line"
    if error["type"] == "missing":
        return f"field {name!r} is missing (a task needs id, repo and task; SWE-bench lines instance_id, " \
               "repo, problem_statement)"
    if error["type"] == "extra_forbidden":
        return f"unknown field {name!r}; the fields are {', '.join(Task.model_fields)}"
    if name == "id":
        return "id must be 1-200 letters, digits, '.', '_' or '-' (it names the session file)"
    return f"field {name!r}: {error['msg']}"


def _resolve_repo(repo: str, base: Path, *, swe_bench: bool) -> str:
    """A URL stays; `owner/name` of a SWE-bench line that is no folder here is GitHub's; a path
    becomes absolute (relative to the tasks file)."""
    if is_git_url(repo):
        return repo
    path = Path(repo).expanduser()
    path = path if path.is_absolute() else base / path
    if swe_bench and not path.exists() and _GITHUB_NAME.match(repo):
        return f"https://github.com/{repo}.git"
    return str(path.resolve())


def is_git_url(repo: str) -> bool:
    """True for `scheme://...` and scp-like `user@host:path` repository addresses."""
    return "://" in repo or bool(re.match(r"^[\w.-]+@[\w.-]+:", repo))
