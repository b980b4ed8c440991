"""`ctxagent doctor` says the permission mode and the sandbox commands would get."""

from __future__ import annotations

import pytest

from ctxagent.exec.sandbox import bwrap_works
from tests.support.cli import invoke


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / ".config"))
    (tmp_path / ".config" / "ctxagent").mkdir(parents=True)
    return tmp_path / ".config" / "ctxagent" / "config.toml"


def test_doctor_says_the_mode_and_that_there_is_no_sandbox(tmp_path, home) -> None:
    home.write_text('[agent]\nmode = "workspace-write"\n[exec]\nsandbox = "off"\n', encoding="utf-8")
    out = invoke(["doctor", "--offline", "--repo", str(tmp_path), "--base-url", "http://127.0.0.1:9/v1"])
    text = " ".join(out.output.split())
    assert "commands: mode workspace-write; sandbox NONE" in text and "runs unsandboxed" in text


@pytest.mark.skipif(not bwrap_works(), reason="bubblewrap does not work here")
def test_doctor_names_the_bubblewrap_sandbox(tmp_path, home) -> None:
    out = invoke(["doctor", "--offline", "--repo", str(tmp_path), "--base-url", "http://127.0.0.1:9/v1"])
    assert "commands: mode read-only; sandbox bubblewrap: workspace writable" in " ".join(out.output.split())


def test_doctor_names_the_git_that_checkpoints_need(tmp_path, home) -> None:
    out = invoke(["doctor", "--offline", "--repo", str(tmp_path), "--base-url", "http://127.0.0.1:9/v1"])
    assert "checkpoints: git 2." in " ".join(out.output.split())


def test_doctor_says_that_without_git_changes_are_refused(tmp_path, home, monkeypatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    out = invoke(["doctor", "--offline", "--repo", str(tmp_path), "--base-url", "http://127.0.0.1:9/v1"])
    assert "checkpoints: git not found: patches and commands are refused" in " ".join(out.output.split())
