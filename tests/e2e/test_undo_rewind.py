"""`/undo` and `/rewind` in the real `ctxagent chat` (subprocess) against the fake model:
the tree comes back exactly (hashes), and the conversation the model sees is rewound."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from tests.e2e.conftest import ROOT, model_env
from tests.support.fake_openai import text, tool_calls

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="checkpoints need git")
FIRST = ("*** Begin Patch\n*** Update File: src/app.py\n@@ def greet(name):\n"
         '-    return "hello " + name\n+    return "hi " + name\n*** Add File: docs/notes.md\n+# notes\n'
         "*** Delete File: tests/test_app.py\n*** End Patch\n")
SECOND = "*** Begin Patch\n*** Delete File: README.md\n*** Update File: docs/notes.md\n@@\n-# notes\n+# more\n*** End Patch\n"


def cli_env(server=None) -> dict[str, str]:
    """The model (when given) and this checkout's ctxagent on the child's path."""
    return {**(model_env(server) if server else {}), "PYTHONPATH": str(ROOT)}


def hashes(repo: Path) -> dict[str, str]:
    return {p.relative_to(repo).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(repo.rglob("*"))
            if p.is_file() and p.relative_to(repo).parts[0] not in (".git", ".ctxagent")}


def user_messages(request: dict) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "user"]


@pytest.mark.parametrize("git", [True, False], ids=["git", "plain"])
def test_undo_in_chat_restores_the_tree_exactly(ctxagent, fake_server, repo: Path, git: bool) -> None:
    if not git:
        shutil.rmtree(repo / ".git")
    before = hashes(repo)
    server = fake_server([tool_calls([("apply_patch", json.dumps({"patch": FIRST}))]), text("changed three files")])
    proc = ctxagent("chat", "--repo", str(repo), "--yes", input="make it terse\n/undo\n/exit\n",
                    extra_env=cli_env(server))
    assert proc.returncode == 0, proc.stderr
    assert "changed three files" in proc.stdout
    assert "restored 3 file(s)" in proc.stdout, proc.stdout
    assert hashes(repo) == before and not (repo / "docs").exists()


def test_rewind_restores_code_and_conversation(ctxagent, fake_server, repo: Path) -> None:
    before = hashes(repo)
    server = fake_server([tool_calls([("apply_patch", json.dumps({"patch": FIRST}))]), text("turn one done"),
                          tool_calls([("apply_patch", json.dumps({"patch": SECOND}))]), text("turn two done"),
                          text("turn three done"), text("fresh answer")])
    script = ("first request\nsecond request\n/rewind\n/rewind 2\nthird request\n"
              "/rewind 1\nfresh request\n/exit\n")
    proc = ctxagent("chat", "--repo", str(repo), "--yes", input=script, extra_env=cli_env(server))
    assert proc.returncode == 0, proc.stderr
    assert "turn 1: first request" in proc.stdout and "turn 2: second request" in proc.stdout
    assert "/rewind T [code|conversation|both]" in proc.stdout  # shown as text, not taken for markup
    requests = server.requests()
    third = next(r for r in requests if user_messages(r)[-1:] == ["third request"])
    assert user_messages(third) == ["first request", "third request"]  # turn 2 is gone, turn 1 kept
    fresh = requests[-1]
    assert user_messages(fresh) == ["fresh request"] and len(fresh["messages"]) == 2  # system + the new request
    assert hashes(repo) == before  # every change of turns 1 and 2 undone
    assert "Its request was:" in proc.stdout and "second request" in proc.stdout


def test_rewind_refuses_to_clobber_a_hand_edit_in_a_pipe(ctxagent, fake_server, repo: Path) -> None:
    server = fake_server([tool_calls([("apply_patch", json.dumps({"patch": FIRST}))]), text("done")])
    first = ctxagent("chat", "--repo", str(repo), "--yes", input="change it\n/exit\n", extra_env=cli_env(server))
    assert first.returncode == 0, first.stderr
    (repo / "src" / "app.py").write_text("my own edit\n")
    edited = hashes(repo)
    proc = ctxagent("undo", "--repo", str(repo), extra_env=cli_env())
    assert proc.returncode == 1 and "edited by hand" in proc.stdout and "--force" in proc.stdout
    assert hashes(repo) == edited


CHANGES = ("from pathlib import Path\n"
           "Path('src/app.py').write_text('print(1)\\n')\n"
           "Path('README.md').unlink()\n"
           "Path('out').mkdir()\n"
           "Path('out/made.txt').write_text('made by code\\n')\n")


@pytest.mark.parametrize("git", [True, False], ids=["git", "plain"])
def test_undo_after_code_that_created_modified_and_deleted_files(ctxagent, fake_server, repo: Path, env, git: bool) -> None:
    if not git:
        shutil.rmtree(repo / ".git")
    config = Path(env["XDG_CONFIG_HOME"]) / "ctxagent" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('[agent]\nmode = "workspace-write"\n[exec]\nsandbox = "off"\n', encoding="utf-8")
    before = hashes(repo)
    server = fake_server([tool_calls([("python_exec", json.dumps({"code": CHANGES}))]), text("ran it")])
    proc = ctxagent("chat", "--repo", str(repo), "--allow-exec", input="change things\n/undo\n/exit\n",
                    extra_env=cli_env(server))
    assert proc.returncode == 0, proc.stderr
    [result] = [m["content"] for m in server.requests()[-1]["messages"] if m["role"] == "tool"]
    for name in ("src/app.py", "README.md", "out/made.txt"):
        assert name in result, result  # the model is told which files the code touched
    assert "restored 3 file(s)" in proc.stdout, proc.stdout
    assert hashes(repo) == before and not (repo / "out").exists()
