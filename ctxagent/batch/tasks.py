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
from typing import Annotated, Any, Literal

from msgspec import Meta

from ctxagent.errors import BatchError
from ctxagent.validation import Invalid, Record, field_names, fields, validate

#: Ids name files (sessions/<id>.jsonl): letters, digits, `.`, `_`, `-` (SWE-bench's fit).
ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}\Z")
#: A commit, tag or branch: no spaces, not starting with "-" (it would be read as an option).
_COMMIT_PATTERN = r"^[^-\s]\S*\Z"
_GITHUB_NAME = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
_SWE_BENCH_KEYS = {"instance_id", "repo", "base_commit", "problem_statement"}


class Task(Record):
    """One task: where (`repo` a path or git URL, `base_commit`), what (`task`), how to check
    (`setup`, `test`: shell command lines) and its own limits (None: the batch's)."""

    id: Annotated[str, Meta(pattern=ID_PATTERN.pattern)]
    repo: Annotated[str, Meta(min_length=1)]
    task: Annotated[str, Meta(min_length=1)]
    base_commit: Annotated[str, Meta(pattern=_COMMIT_PATTERN, max_length=256)] | None = None
    setup: str | None = None
    test: str | None = None
    model: str | None = None
    max_steps: Annotated[int, Meta(gt=0, le=10_000)] | None = None
    max_task_tokens: Annotated[int, Meta(gt=0, le=1_000_000_000)] | None = None
    max_cost_usd: Annotated[float, Meta(gt=0, le=10_000)] | None = None
    timeout_s: Annotated[float, Meta(gt=0, le=86_400)] | None = None
    mode: Literal["read-only", "workspace-write"] | None = None


def load_tasks(path: Path, *, check_repos: bool = False) -> list[Task]:
    """Every task of the JSONL file `path` (UTF-8, a BOM allowed), in order; relative repo paths
    are resolved against its folder; `check_repos`: a path must exist here (local backend).
    Raises BatchError naming the line and the field (bad JSON or encoding, missing or unknown
    field, duplicate id, a missing repository, a file that cannot be read)."""
    path = Path(path)
    try:
        lines = path.read_bytes().removeprefix(b"\xef\xbb\xbf").splitlines()
    except OSError as exc:
        raise BatchError(f"cannot read the tasks file {path}: {exc.strerror or exc}") from exc
    tasks: list[Task] = []
    seen: dict[str, int] = {}
    for number, raw in enumerate(lines, 1):
        where = f"{path} line {number}"
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise BatchError(f"{where}: not UTF-8 (byte {exc.object[exc.start]:#x} at column {exc.start + 1}); "
                             "save the file as UTF-8") from None
        if not line.strip():
            continue
        task = parse_task_line(line, where=where, base=path.parent)
        if task.id in seen:
            raise BatchError(f"{where}: id {task.id!r} is already used on line {seen[task.id]}; "
                             "every task needs its own id")
        if check_repos and not is_git_url(task.repo) and not Path(task.repo).is_dir():
            raise BatchError(f"{where}: repository {task.repo} does not exist (give a folder, a git repository or "
                             "a git URL; a relative path is relative to the tasks file)")
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
    values = _from_swe_bench(raw) if "instance_id" in raw else raw
    try:
        task = validate(Task, values)
    except Invalid as exc:
        raise BatchError(f"{where}: {_first_problem(exc, values)}") from None
    return task.replace(repo=_resolve_repo(task.repo, base, swe_bench="instance_id" in raw))


def _from_swe_bench(raw: dict[str, Any]) -> dict[str, Any]:
    """SWE-bench's instance fields as ours; its other keys are dropped (they are the benchmark's)."""
    values = {"id": raw.get("instance_id"), "repo": raw.get("repo"), "task": raw.get("problem_statement")}
    if raw.get("base_commit") is not None:
        values["base_commit"] = raw["base_commit"]
    ours = set(field_names(Task)) - {"id", "task"}
    values.update({k: v for k, v in raw.items() if k in ours and k not in _SWE_BENCH_KEYS})
    return values


def _first_problem(exc: Invalid, values: dict[str, Any]) -> str:
    missing = [f.name for f in fields(Task) if f.required and f.name not in values]
    if missing:
        return f"field {missing[0]!r} is missing (a task needs id, repo and task; SWE-bench lines instance_id, " \
               "repo, problem_statement)"
    unknown = [k for k in values if k not in field_names(Task)]
    if unknown:
        return f"unknown field {unknown[0]!r}; the fields are {', '.join(field_names(Task))}"
    name = ".".join(str(p) for p in exc.loc) or "the line"
    if name == "id":
        return "id must be 1-200 letters, digits, '.', '_' or '-' (it names the session file)"
    if name == "base_commit" and "regex" in exc.msg:
        return "field 'base_commit' must be a commit (a hash, a tag or a branch: no spaces, not starting with '-')"
    return f"field {name!r}: {exc.msg}"


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
