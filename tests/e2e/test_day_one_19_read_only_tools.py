"""Issue 15 item 19, end to end: `nl`, `tr`, `diff`, `jq` and `xargs` through the real
`ctxagent tool terminal`, and in a `run` where the model uses them; what they must not do
(read outside, unknown flags, xargs feeding a refused command) is refused with the reason."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.e2e.conftest import model_env
from tests.support.fake_openai import text, tool_calls


def _terminal(ctxagent, repo: Path, command: str) -> dict:
    proc = ctxagent("tool", "terminal", json.dumps({"command": command}), "--repo", str(repo), "--json")
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture
def project(repo: Path, tmp_path: Path) -> Path:
    (repo / "package.json").write_text('{"name": "proj", "version": "1.2.0", "deps": ["a", "b"]}\n')
    (repo / "src" / "old_app.py").write_text((repo / "src" / "app.py").read_text().replace("hello", "hi"))
    (tmp_path / "outside.txt").write_text("OUTSIDE-SECRET\n")
    return repo


@pytest.mark.parametrize("command,expect", [
    ("nl -ba src/app.py", "     1\tdef greet(name):"),
    ("cat README.md | tr a-z A-Z", "# PROJ"),
    ("diff -u src/old_app.py src/app.py", '+    return "hello " + name'),
    ("find src -name '*.py' | sort | xargs grep -n 'return'", 'src/app.py:2:    return "hello " + name'),
    ("find . -name '*.py' -path './src/*' | xargs wc -l | tail -1", "total"),
])
def test_the_new_commands_run(ctxagent, project: Path, command: str, expect: str) -> None:
    result = _terminal(ctxagent, project, command)
    assert result["ok"] is True and expect in result["content"], result["content"]


@pytest.mark.skipif(shutil.which("jq", path="/usr/local/bin:/usr/bin:/bin") is None, reason="jq is not installed")
def test_jq_reads_json_in_the_workspace(ctxagent, project: Path) -> None:
    assert _terminal(ctxagent, project, "jq -r '.deps[]' package.json")["content"] == "a\nb"
    refused = _terminal(ctxagent, project, "jq -n 'import \"x\" as $d; $d'")
    assert refused["ok"] is False and "import" in refused["content"]


@pytest.mark.parametrize("command,reason", [
    ("nl ../outside.txt", "outside the workspace"), ("diff src/app.py ../outside.txt", "outside the workspace"),
    ("diff --to-file=../outside.txt src/app.py", "outside the workspace"), ("tr a b README.md", "standard input"),
    ("echo ../outside.txt | xargs cat", "outside the workspace"), ("echo x | xargs -I{} cat {}", "-I"),
    ("echo id | xargs sh -c", "'sh'"), ("echo --pre=sh | xargs grep -r x", "--pre"),
    ("jq -L /etc -n 1", "-L"), ("nl --bogus README.md", "--bogus"),
])
def test_what_they_must_not_do_is_refused(ctxagent, project: Path, command: str, reason: str) -> None:
    result = _terminal(ctxagent, project, command)
    assert result["ok"] is False and reason in result["content"], result["content"]
    assert "OUTSIDE-SECRET" not in result["content"]


def test_the_model_uses_them_in_a_run(ctxagent, fake_server, project: Path) -> None:
    server = fake_server([
        tool_calls([("terminal", json.dumps({"command": "diff src/old_app.py src/app.py"}))]),
        tool_calls([("terminal", json.dumps({"command": "echo src/app.py ../outside.txt | xargs nl"}))]),
        tool_calls([("terminal", json.dumps({"command": "echo src/app.py | xargs nl"}))]),
        text("done"),
    ])
    proc = ctxagent("run", "Compare the apps.", "--repo", str(project), extra_env=model_env(server))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = [m["content"] for m in server.requests()[-1]["messages"] if m["role"] == "tool"]
    assert '< def greet(name):' not in results[0] and '> ' in results[0] and "[exit status 1]" in results[0]
    assert "outside the workspace" in results[1] and "none ran" in results[1]
    assert "     1\tdef greet(name):" in results[2]
