"""Which servers start: a repository's only once approved (asked once on a terminal, remembered by
real path and definition, asked again when the definition changes), never asked in a pipe, all
of them when the repository is trusted; none when `[mcp] enabled` is false."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

from ctxagent.mcp.approvals import ServerApprovals, approvals_path
from ctxagent.mcp.config import parse_server_tables
from ctxagent.mcp.settings import McpSettings
from ctxagent.mcp.startup import open_servers, session_servers

#: A command that cannot start: a server that was let start ends "failed", one that was not, "not started".
MISSING = "/nonexistent/mcp-server"


def _repo_server(repo: Path, args: list[str] | None = None):
    [server] = parse_server_tables({"repo_srv": {"command": MISSING, "args": args or []}},
                                   str(repo / ".ctxagent" / "config.toml"), origin="repo")
    return server


class Asker:
    def __init__(self, answer: str | None) -> None:
        self.answer, self.questions = answer, []

    def __call__(self, question: str) -> str | None:
        self.questions.append(question)
        return self.answer


def _state(repo: Path, server, approvals: ServerApprovals, **kwargs) -> tuple[str, str]:
    settings = kwargs.pop("settings", McpSettings())
    options = {"repo_trusted": False, "approvals": approvals, **kwargs}
    with open_servers(repo, [server], settings, **options) as manager:
        status = manager.servers[server.name]
        return status.state, status.reason


def test_a_repository_server_is_asked_about_once_and_remembered_until_it_changes(tmp_path: Path) -> None:
    repo, approvals = tmp_path / "repo", ServerApprovals(tmp_path / "state" / "mcp_approvals.json")
    repo.mkdir()
    ask = Asker("y")
    assert _state(repo, _repo_server(repo), approvals, ask=ask, interactive=True)[0] == "failed"  # it was let start
    assert len(ask.questions) == 1 and MISSING in ask.questions[0] and "repo_srv" in ask.questions[0]
    never = Asker(None)
    assert _state(repo, _repo_server(repo), approvals, ask=never, interactive=True)[0] == "failed"
    assert never.questions == []  # remembered: not asked again
    changed = Asker("n")
    state, reason = _state(repo, _repo_server(repo, ["--other"]), approvals, ask=changed, interactive=True)
    assert (state, reason) == ("not started", "you did not approve it") and len(changed.questions) == 1
    data = json.loads((tmp_path / "state" / "mcp_approvals.json").read_text(encoding="utf-8"))
    assert list(data["repos"]) == [str(repo.resolve())]


def test_the_approval_belongs_to_the_repositorys_real_path(tmp_path: Path) -> None:
    repo, other, approvals = tmp_path / "repo", tmp_path / "other", ServerApprovals(tmp_path / "a.json")
    repo.mkdir()
    other.mkdir()
    (tmp_path / "link").symlink_to(repo)
    _state(repo, _repo_server(repo), approvals, ask=Asker("yes"), interactive=True)
    assert _state(tmp_path / "link", _repo_server(repo), approvals)[0] == "failed"  # same repository
    assert _state(other, _repo_server(other), approvals)[0] == "not started"


def test_without_a_terminal_a_repository_server_is_never_asked_about_nor_started(tmp_path: Path) -> None:
    ask = Asker("y")
    state, reason = _state(tmp_path, _repo_server(tmp_path), ServerApprovals(tmp_path / "a.json"), ask=ask,
                           interactive=False)
    assert state == "not started" and "--trust-repo-config" in reason and ask.questions == []


def test_a_trusted_repository_and_the_users_own_servers_start_without_asking(tmp_path: Path) -> None:
    ask, approvals = Asker("n"), ServerApprovals(tmp_path / "a.json")
    assert _state(tmp_path, _repo_server(tmp_path), approvals, ask=ask, interactive=True, repo_trusted=True)[0] == "failed"
    [mine] = parse_server_tables({"mine": {"command": MISSING}}, "/u/config.toml")
    assert _state(tmp_path, mine, approvals, ask=ask, interactive=True)[0] == "failed"
    assert ask.questions == [] and not (tmp_path / "a.json").exists()


def test_disabled_servers_are_listed_not_started(tmp_path: Path) -> None:
    [mine] = parse_server_tables({"mine": {"command": MISSING}}, "/u/config.toml")
    approvals = ServerApprovals(tmp_path / "a.json")
    assert _state(tmp_path, mine, approvals, settings=McpSettings(enabled=False)) == ("disabled", "[mcp] enabled = false")
    [off] = parse_server_tables({"off": {"command": MISSING, "enabled": False}}, "/u/config.toml")
    assert _state(tmp_path, off, approvals) == ("disabled", "enabled = false in /u/config.toml")


def test_session_servers_put_the_config_files_before_the_project_file(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"calc": {"command": "theirs"},
                                                                   "extra": {"command": "x"}}}), encoding="utf-8")
    configured = parse_server_tables({"calc": {"command": "mine"}}, "/u/config.toml")
    servers, [problem] = session_servers(tmp_path, configured, McpSettings(), env={})
    assert [(s.name, s.command, s.origin) for s in servers] == [("calc", "mine", "user"), ("extra", "x", "repo")]
    assert "left out" in problem
    assert session_servers(tmp_path, [], McpSettings(project_file=False), env={}) == ([], [])


def test_approvals_live_in_the_users_state_folder(tmp_path: Path) -> None:
    assert approvals_path({"XDG_STATE_HOME": "/s"}) == Path("/s/ctxagent/mcp_approvals.json")
    assert approvals_path({"HOME": "/h"}) == Path("/h/.local/state/ctxagent/mcp_approvals.json")


def test_a_corrupt_approvals_file_reads_as_empty_and_is_rewritten(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_text("{broken", encoding="utf-8")
    approvals, server = ServerApprovals(path), _repo_server(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert not approvals.approved(tmp_path, server)
        approvals.remember(tmp_path, server)
    assert approvals.approved(tmp_path, server)
    assert list(tmp_path.glob("a.json.corrupt-*"))  # the damaged file was kept aside
