"""`python_exec`: the model sends Python code; the user sees it (syntax coloured) and
approves it; it runs as a script in a subprocess (workspace-write mode only).

The interpreter is the repository's own when it has one (`ctxagent.exec.interpreter`),
the working directory is the workspace (which is also on `sys.path`), and the run takes
the one exec path (`ctxagent.exec.executor`: checkpoint, sandbox, timeout, scrubbed
environment, capped output, files changed). The code file lives in a private temporary
directory that is removed in every case, Ctrl-C and timeout included.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Annotated, Any, ClassVar

from msgspec import Meta

from ctxagent.errors import ToolInputError, ToolRefusedError
from ctxagent.exec.executor import Executor
from ctxagent.exec.gate import WRITE_MODE, ExecPolicy, Gate
from ctxagent.exec.interpreter import find_python
from ctxagent.tools.base import Tool, ToolParams, ToolResult
from ctxagent.tools.exec_gate import Ask, GatedRuns

#: Most characters of code one call may send.
MAX_CODE_CHARS = 100_000


class PythonExecParams(ToolParams):
    """Arguments of python_exec."""

    code: Annotated[str, Meta(description="a whole Python script; print what you want to see (stdout and stderr "
                                          "come back)")]


class PythonExecTool(Tool):
    """Run approved Python code in `workspace` under `exec_policy` (mode, sandbox, limits).

    session_id: tags the checkpoints; ask: `Gate -> bool` approval for library use (the
    agent asks the user itself). `run({"code": ...})` returns {"exit_code", "files", ...}.
    """

    name: ClassVar[str] = "python_exec"
    description: ClassVar[str] = (
        "Run a Python script in the workspace (its working directory) after the user approves it, and get its "
        "exit code, output and the files it created, modified or deleted. Use it to compute, check or try "
        "something; change source files with apply_patch instead.")
    Params: ClassVar[type[ToolParams]] = PythonExecParams
    #: Offered to the model only in this mode (`ctxagent.agent.toolset`).
    requires_mode: ClassVar[str] = WRITE_MODE

    def __init__(self, workspace: str | os.PathLike[str] = ".", *, exec_policy: ExecPolicy | None = None,
                 session_id: str | None = None, ask: Ask | None = None) -> None:
        self.workspace = Path(workspace).resolve()
        self.executor = Executor(self.workspace, exec_policy or ExecPolicy(), session_id=session_id)
        self.gates = GatedRuns(ask)

    @classmethod
    def for_repo(cls, repo: str | os.PathLike[str], settings: Any = None, *, session_id: str | None = None,
                 client: Any = None) -> PythonExecTool:
        """python_exec in repository `repo`, policy from `settings` (`[agent] mode`, `[exec]`)."""
        return cls(repo, exec_policy=settings.exec_policy() if settings is not None else None, session_id=session_id)

    def interpreter(self) -> str:
        """The Python that runs the code. Raises ToolInputError for a bad configured one."""
        return find_python(self.workspace, self.executor.policy.python)

    def gate(self, args: dict[str, Any]) -> Gate:
        """The approval gate of this call (refused in read-only mode, else asked)."""
        code = _code(self.parse(args))
        return self.gates.hold(code, self._gate(code))

    def _gate(self, code: str) -> Gate:
        try:
            where = self.executor.sandbox().describe()
        except ToolRefusedError as exc:
            return Gate("python_exec", code, "python", refusal=str(exc))
        return self.executor.policy.code_gate(code, details=[f"interpreter: {self.interpreter()}",
                                                             f"cwd: {self.workspace}", f"sandbox: {where}"])

    def _run(self, params: PythonExecParams) -> ToolResult:  # type: ignore[override]
        code = _code(params)
        self.gates.check(code, lambda: self._gate(code))
        python = self.interpreter()
        private = tempfile.mkdtemp(prefix="ctxagent-py-")  # 0700, ours alone
        try:
            script = os.path.join(private, "snippet.py")
            with open(script, "w", encoding="utf-8") as handle:
                handle.write(code)
            lines = code.count("\n") + 1
            report = self.executor.run([python, script], tool="python_exec", label=_label(code),
                                       title=f"python_exec ({lines} line{'s' if lines != 1 else ''}, {python})",
                                       cwd=self.workspace, extra_env={"PYTHONPATH": str(self.workspace),
                                                                       "PYTHONDONTWRITEBYTECODE": "1",
                                                                       "PYTHONUNBUFFERED": "1"})
        finally:
            shutil.rmtree(private, ignore_errors=True)
        return ToolResult(ok=report.ok, content=report.text, data=report.data)


def _code(params: PythonExecParams) -> str:
    if not params.code.strip():
        raise ToolInputError("python_exec: the code is empty; send a whole script, e.g. {\"code\": \"print(1 + 1)\"}")
    if len(params.code) > MAX_CODE_CHARS:
        raise ToolInputError(f"python_exec: the code has {len(params.code)} characters, the limit is "
                             f"{MAX_CODE_CHARS}; send a shorter script")
    if "\x00" in params.code:
        raise ToolInputError("python_exec: the code holds a NUL character; remove it")
    return params.code


def _label(code: str) -> str:
    first = next((line.strip() for line in code.splitlines() if line.strip()), "")
    return f"python: {first[:120]}"
