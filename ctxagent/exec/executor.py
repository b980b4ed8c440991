"""The one path every approved run takes (commands and python_exec alike).

checkpoint the working tree (refuse when that fails: nothing runs unrecorded) -> private
scratch directory (HOME, TMPDIR) -> scrubbed environment -> sandbox prefix -> run with
timeout and capped output -> what changed since the checkpoint -> one `RunReport`. A
Ctrl-C kills the run, and the KeyboardInterrupt goes on with `report` set to the report
of what happened so far (the loop sends it as the call's result). The scratch directory
is removed in every case.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxagent.errors import StorageError, ToolRefusedError
from ctxagent.shell.process import safe_env

if TYPE_CHECKING:  # the checkpoint store, sandbox and report load on the first run: the read-only
    # terminal holds an Executor for its approved-command path only (start-up, issue 16)
    from ctxagent.exec.checkpoints import CheckpointStore
    from ctxagent.exec.gate import ExecPolicy
    from ctxagent.exec.process import Completed
    from ctxagent.exec.report import RunReport
    from ctxagent.exec.sandbox import Sandbox


class Executor:
    """Runs approved programs in `workspace` under `policy`.

    session_id, turn: recorded with each checkpoint (`turn` is kept current by the agent).
    store: the CheckpointStore (default: the workspace's own).
    """

    def __init__(self, workspace: Path, policy: ExecPolicy, *, session_id: str | None = None,
                 store: CheckpointStore | None = None) -> None:
        self.workspace = Path(workspace).resolve()
        self.policy = policy
        self.session_id = session_id or "library"
        self.turn = 0
        self._store = store

    @property
    def store(self) -> CheckpointStore:
        if self._store is None:
            from ctxagent.exec.checkpoints import CheckpointStore

            self._store = CheckpointStore.for_repo(self.workspace)
        return self._store

    def sandbox(self) -> Sandbox:
        """The sandbox in force. Raises ToolRefusedError when it is required but missing."""
        from ctxagent.exec.sandbox import choose

        return choose(self.policy.sandbox, network=self.policy.network)

    def run(self, argv: list[str], *, tool: str, label: str, title: str, cwd: Path,
            extra_env: dict[str, str] | None = None) -> RunReport:
        """Checkpoint, then run `argv` in `cwd` (`title`: the report's first line, `label`:
        the checkpoint's; `extra_env`: more variables). Raises ToolRefusedError when no
        checkpoint can be recorded or a required sandbox is missing."""
        from ctxagent.exec.process import run_program

        sandbox = self.sandbox()
        checkpoint = self._record(tool, label)
        scratch = tempfile.mkdtemp(prefix="ctxagent-exec-")
        try:
            env = {**self.environment(scratch, str(cwd)), **(extra_env or {})}
            prefix = sandbox.prefix(workspace=str(self.workspace), cwd=str(cwd), scratch=scratch)
            try:
                done = run_program(argv, cwd=str(cwd), env=env, timeout=self.policy.timeout_s,
                                   max_output=self.policy.max_output_bytes, prefix=prefix)
            except KeyboardInterrupt as exc:
                partial = getattr(exc, "completed", None)
                if partial is not None:
                    exc.report = self._report(title, partial, sandbox, checkpoint).text  # type: ignore[attr-defined]
                raise
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        return self._report(title, done, sandbox, checkpoint)

    def environment(self, scratch: str, cwd: str) -> dict[str, str]:
        """`shell.process.safe_env` (no secrets: an allow-list) with the user's PATH (the
        repository's virtual environment first) and the `env_passthrough` names."""
        from ctxagent.exec.interpreter import venv_bin

        env = safe_env(home=scratch, cwd=cwd)
        path = os.environ.get("PATH", env["PATH"])
        venv = venv_bin(self.workspace)
        if venv is not None:
            path = f"{venv}{os.pathsep}{path}"
            env["VIRTUAL_ENV"] = str(Path(venv).parent)
        env["PATH"] = path
        for name in self.policy.env_passthrough:
            if name in os.environ:
                env[name] = os.environ[name]
        return env

    def _record(self, tool: str, label: str) -> Any:
        from ctxagent.exec.checkpoints import CheckpointError

        try:
            return self.store.record(session_id=self.session_id, turn=self.turn, tool=tool, label=label[:200])
        except (CheckpointError, StorageError) as exc:
            raise ToolRefusedError(f"{tool}: not run: the checkpoint before it could not be recorded ({exc}); "
                                   "nothing runs unrecorded. Free disk space or fix .ctxagent/checkpoints, "
                                   "then retry.") from None

    def _report(self, title: str, done: Completed, sandbox: Sandbox, checkpoint: Any) -> RunReport:
        from ctxagent.exec.checkpoints import CheckpointError
        from ctxagent.exec.report import RunReport, build_report

        try:
            changes = self.store.changes_since(checkpoint)
            note = ""
        except (CheckpointError, StorageError) as exc:
            changes, note = [], f"\n[files: unknown, the checkpoint after the run failed: {exc}]"
        name = "bubblewrap" + ("" if sandbox.network else ", network off") if sandbox.kind == "bubblewrap" else "none"
        report = build_report(title, done, sandbox=name, timeout=self.policy.timeout_s,
                              max_output=self.policy.max_output_bytes, changes=changes)
        notice = getattr(checkpoint, "notice", None)
        extra = (f"\n[checkpoint: {notice}]" if notice else "") + note
        if extra:
            report = RunReport(report.text + extra, report.data, report.ok)
        return report
