"""Trial of 2026-12-02: `ctxagent apply` started in `rich/` with a patch naming
`./filesize.py` said "the file does not exist; create it with '*** Add File:'", though
`rich/filesize.py` was right there: patch paths are relative to the workspace root. The
refusal now says so and names the files the path may have meant (real CLI; for the agent's
own patches the fake server as the model)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.e2e.conftest import APP_PY, ctxagent_exe, model_env
from tests.support.fake_openai import text, tool_calls

PATCH = ("*** Begin Patch\n*** Update File: ./app.py\n@@ def greet(name):\n"
         '-    return "hello " + name\n+    return "hi " + name\n*** End Patch\n')
MEANT = "(paths in a patch are relative to the workspace root {root}: did you mean 'src/app.py'?)"


def test_apply_from_a_subdirectory_names_the_file_meant(env, repo: Path, tmp_path: Path) -> None:
    (tmp_path / "fix.patch").write_text(PATCH, encoding="utf-8")
    proc = subprocess.run([*ctxagent_exe(), "apply", str(tmp_path / "fix.patch"), "--yes"], cwd=repo / "src",
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    said = " ".join(proc.stderr.split())
    assert f"Update File ./app.py: the file does not exist {MEANT.format(root=repo)}" in said
    assert (repo / "src" / "app.py").read_text(encoding="utf-8") == APP_PY


def test_the_model_gets_the_same_hint(ctxagent, fake_server, repo: Path) -> None:
    server = fake_server([tool_calls([("apply_patch", json.dumps({"patch": PATCH.replace("./app.py", "app.py")}))]),
                          text("retried")])
    proc = ctxagent("run", "say hi", "--repo", str(repo), "--yes", extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    [refusal] = [m["content"] for m in server.requests()[-1]["messages"] if m["role"] == "tool"]
    assert MEANT.format(root=repo) in refusal


def test_no_hint_when_nothing_matches(ctxagent, fake_server, repo: Path) -> None:
    patch = PATCH.replace("./app.py", "nowhere.py")
    server = fake_server([tool_calls([("apply_patch", json.dumps({"patch": patch}))]), text("ok")])
    assert ctxagent("run", "x", "--repo", str(repo), "--yes", extra_env=model_env(server)).returncode == 0
    [refusal] = [m["content"] for m in server.requests()[-1]["messages"] if m["role"] == "tool"]
    assert "the file does not exist; to create it use '*** Add File:'" in refusal and "did you mean" not in refusal
