"""`ctxagent doctor`'s report is `REPORT_LINES` in order (issue 15, item 9): a new check is one
more function, and one that fails is reported on its line without hiding the others."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxagent.cli import doctor_cmd
from tests.support.cli import invoke


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("CTXAGENT_LOCAL_MODEL", str(tmp_path / "absent.gguf"))
    for name in ("CTXAGENT_PROVIDER", "CTXAGENT_BASE_URL", "OPENAI_API_KEY", "DEEPSEEK_API_KEY", "DASHSCOPE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def test_an_added_check_is_printed_in_its_place(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def cost_line(settings, workspace) -> str:
        return f"cost cap: {settings.agent.max_cost_usd} USD" if settings is not None else ""

    monkeypatch.setattr(doctor_cmd, "REPORT_LINES", [*doctor_cmd.REPORT_LINES, cost_line])
    out = invoke(["doctor", "--offline", "--repo", str(home), "--base-url", "http://127.0.0.1:9/v1"])
    assert out.exit_code == 0, out.output
    assert out.stdout.index("checkpoints:") < out.stdout.index("cost cap: 2.0 USD")


def test_a_failing_check_is_reported_and_the_rest_still_printed(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken_line(settings, workspace) -> str:
        raise OSError("disk on fire")

    monkeypatch.setattr(doctor_cmd, "REPORT_LINES", [broken_line, *doctor_cmd.REPORT_LINES])
    out = invoke(["doctor", "--offline", "--repo", str(home), "--base-url", "http://127.0.0.1:9/v1"])
    assert "broken_line: could not be checked (OSError: disk on fire)" in " ".join(out.stdout.split())
    assert "checkpoints:" in out.stdout and out.exit_code == 0


def test_without_a_provider_the_report_follows_the_problem(home: Path) -> None:
    out = invoke(["doctor", "--repo", str(home)])
    assert out.exit_code == 1
    lines = [line.split(":")[0] for line in out.stdout.splitlines() if ":" in line]
    assert lines[0] == "configuration problem"
    for name in ("workspace", "state folder", "repository config", "rg", "bwrap", "commands", "checkpoints",
                 "endpoint"):
        assert name in lines, name


def test_the_state_folder_line_counts_sessions_and_refuses_a_link(home: Path, tmp_path: Path) -> None:
    repo = tmp_path / "r"
    (repo / ".ctxagent" / "sessions").mkdir(parents=True)
    (repo / ".ctxagent" / "sessions" / "20260101-000000-abcd.jsonl").write_text("{}\n", encoding="utf-8")
    out = invoke(["doctor", "--offline", "--repo", str(repo), "--base-url", "http://127.0.0.1:9/v1"])
    assert "(1 session(s); see `ctxagent sessions`)" in " ".join(out.stdout.split())
    linked = tmp_path / "l"
    linked.mkdir()
    (linked / ".ctxagent").symlink_to(repo / ".ctxagent")
    out = invoke(["doctor", "--offline", "--repo", str(linked), "--base-url", "http://127.0.0.1:9/v1"])
    assert "state folder:" in out.stdout and "symbolic link" in " ".join(out.output.split())
