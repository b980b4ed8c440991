"""Remembered approvals of a repository's MCP servers, in the user's state (never the repository).

`$XDG_STATE_HOME/ctxagent/mcp_approvals.json` (else `~/.local/state/ctxagent/`):
{"version": 1, "repos": {REAL_PATH: {SERVER: FINGERPRINT}}}. A changed definition has another
fingerprint (`ctxagent.mcp.config.fingerprint`), so it is asked about again.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping

from ctxagent.mcp.settings import ServerConfig
from ctxagent.storage.files import file_lock, read_json_with_fallback, write_json_with_backup

FILE_NAME = "mcp_approvals.json"


def approvals_path(env: Mapping[str, str] | None = None) -> Path:
    """`$XDG_STATE_HOME/ctxagent/mcp_approvals.json`, else `$HOME/.local/state/ctxagent/...`."""
    env = os.environ if env is None else env
    base = env.get("XDG_STATE_HOME") or str(Path(env.get("HOME") or Path.home()) / ".local" / "state")
    return Path(base) / "ctxagent" / FILE_NAME


class ServerApprovals:
    """The approvals file at `path`: `approved(repo, server)`, `remember(repo, server)`."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def approved(self, repo: Path, server: ServerConfig) -> bool:
        """True when `server` of `repo`, defined exactly as now, was approved before."""
        return self._read().get(_key(repo), {}).get(server.name) == server.fingerprint

    def remember(self, repo: Path, server: ServerConfig) -> None:
        """Record the approval of `server` for `repo` (atomic write, under a lock). Raises OSError/StorageError."""
        with file_lock(self.path):
            data = self._read()
            data.setdefault(_key(repo), {})[server.name] = server.fingerprint
            write_json_with_backup(self.path, {"version": 1, "repos": data})

    def _read(self) -> dict[str, dict[str, str]]:
        return read_json_with_fallback(self.path, dict, validate=_valid)


def _key(repo: Path) -> str:
    return os.path.realpath(repo)


def _valid(value: Any) -> dict[str, dict[str, str]]:
    repos = value.get("repos") if isinstance(value, dict) else None
    if not isinstance(repos, dict) or not all(isinstance(v, dict) for v in repos.values()):
        raise ValueError('expected {"version": 1, "repos": {path: {server: fingerprint}}}')
    return {str(k): {str(n): str(f) for n, f in v.items()} for k, v in repos.items()}
