"""The real `ctxagent batch` on what users hand it: --out inside the folder it copies, a setup
line that leaves files, another batch's folder, a results file a kill left half-written."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.batch.conftest import API_KEY, model_env, update_patch
from tests.e2e.conftest import ctxagent_exe
from tests.support.fake_openai import FakeOpenAI, text, tool_calls


def edit_rule(marker: str, patch: str) -> dict:
    return {"contains": marker, "steps": [tool_calls([("apply_patch", json.dumps({"patch": patch}))]), text("done")]}


def run_cli(tasks: Path, out: Path, env: dict, *args: str, cwd: Path | None = None) -> tuple[int, list[dict], str]:
    done = subprocess.run([*ctxagent_exe(), "batch", str(tasks), "--out", str(out), "--yes", "--json", *args],
                          env=env, cwd=cwd, capture_output=True, text=True, timeout=300)
    return done.returncode, [json.loads(line) for line in done.stdout.splitlines() if line.strip()], done.stderr

def _plain_folder(tmp_path: Path) -> Path:
    """`tmp_path/plain`: a folder outside git holding a.txt ("one")."""
    repo = tmp_path / "plain"
    repo.mkdir()
    (repo / "a.txt").write_text("one\n")
    return repo


def _two_tasks(tmp_path: Path) -> Path:
    """The plain folder and a tasks file of two tasks on it, "a" and "b" (TASK a: / TASK b:)."""
    _plain_folder(tmp_path)
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(json.dumps({"id": i, "repo": "plain", "task": f"TASK {i}: x"}) + "\n" for i in "ab"))
    return tasks



def test_out_inside_a_plain_folder_and_what_setup_leaves(tmp_path: Path, cli_env: dict) -> None:
    """`cd proj && ctxagent batch tasks.jsonl --out runs` with repo ".": the copy must not copy
    runs/ (it holds the copy itself) and the setup line's files are not the task's diff."""
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "a.txt").write_text("one\n")
    (proj / "tasks.jsonl").write_text(json.dumps({"id": "p1", "repo": ".", "task": "TASK p1: edit",
                                                  "setup": "mkdir -p .venv/bin && echo x > .venv/bin/tool"}) + "\n")
    with FakeOpenAI(rules=[edit_rule("TASK p1:", update_patch("a.txt", "one", "ONE"))]) as server:
        code, events, err = run_cli(Path("tasks.jsonl"), Path("runs"), {**cli_env, **model_env(server)}, cwd=proj)
    assert code == 0, err
    [line] = [json.loads(x) for x in (proj / "runs" / "results.jsonl").read_text().splitlines()]
    assert line["status"] == "finished" and line["setup"]["passed"], line
    assert "runs/" not in line["diff"] and ".venv" not in line["diff"] and "tasks.jsonl" not in line["diff"]
    assert line["diff"].startswith("diff --git a/a.txt b/a.txt") and "+ONE" in line["diff"]
    assert (proj / "a.txt").read_text() == "one\n" and not (proj / ".git").exists()
    assert API_KEY not in (proj / "runs" / "results.jsonl").read_text()


def test_another_batchs_folder_is_not_taken_as_done(tmp_path: Path, cli_env: dict) -> None:
    """Batch B with --out of batch A, whose ids are the same ("t1"...) but whose tasks differ:
    refused before any model call, A's results left as they were."""
    repo = _plain_folder(tmp_path)
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_text(json.dumps({"id": "t1", "repo": "plain", "task": "TASK t1: edit"}) + "\n")
    second.write_text(json.dumps({"id": "t1", "repo": "plain", "task": "TASK other: something else"}) + "\n")
    out = tmp_path / "out"
    with FakeOpenAI(rules=[edit_rule("TASK t1:", update_patch("a.txt", "one", "ONE"))]) as server:
        env = {**cli_env, **model_env(server)}
        code, _, err = run_cli(first, out, env)
        assert code == 0, err
        lines, served = (out / "results.jsonl").read_bytes(), len(server.requests)
        code, events, err = run_cli(second, out, env)
        assert code != 0 and "records another task under id 't1'" in err and "Give a new --out" in err
        assert len(server.requests) == served and (out / "results.jsonl").read_bytes() == lines
        code, _, err = run_cli(second, tmp_path / "plain", env)  # a folder of the user's own files
        assert code != 0 and "already holds other files" in err
        assert sorted(p.name for p in repo.iterdir()) == ["a.txt"]


def test_a_hung_setup_a_step_limit_and_a_failing_test(tmp_path: Path, cli_env: dict) -> None:
    _plain_folder(tmp_path)
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(json.dumps(t) + "\n" for t in [
        {"id": "hang", "repo": "plain", "task": "TASK hang: x", "setup": "sleep 600"},
        {"id": "limit", "repo": "plain", "task": "TASK limit: x", "max_steps": 1, "test": "echo failing; exit 3"},
    ]))
    out = tmp_path / "out"
    with FakeOpenAI(rules=[edit_rule("TASK limit:", update_patch("a.txt", "one", "ONE"))]) as server:
        code, events, err = run_cli(tasks, out, {**cli_env, **model_env(server)}, "--command-timeout", "1",
                                    "--workers", "2")
        assert all("TASK hang:" not in json.dumps(r) for r in server.requests)  # no model call after a failed setup
    assert code == 1, err
    lines = {r["id"]: r for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())}
    hang, limit = lines["hang"], lines["limit"]
    assert hang["status"] == "setup_failed" and hang["setup"]["timed_out"] is True
    assert hang["reason"] == "setup timed out after 1 s (--command-timeout)"
    assert limit["status"] == "max_steps" and limit["steps"] == 1 and "+ONE" in limit["diff"]  # the work so far
    assert limit["test"]["exit_code"] == 3 and limit["test"]["passed"] is False and "failing" in limit["test"]["output"]
    assert events[-1]["event"] == "end" and events[-1]["failed"] == 2 and events[-1]["unfinished"] == 2


def run_in_terminal(argv: list[str], env: dict, columns: int) -> tuple[int, str]:
    """Run `argv` on a pseudo-terminal `columns` wide; (exit code, everything it wrote)."""
    import fcntl
    import os
    import pty
    import struct
    import termios

    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    proc = subprocess.Popen(argv, env=env, stdin=follower, stdout=follower, stderr=follower)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: every writer has closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    return proc.wait(timeout=300), b"".join(chunks).decode("utf-8", "replace")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a pseudo-terminal")
def test_the_live_display_on_a_narrow_terminal_without_colour(tmp_path: Path, cli_env: dict) -> None:
    from tests.support.screen import screen

    tasks = _two_tasks(tmp_path)
    with FakeOpenAI(rules=[edit_rule("TASK a:", update_patch("a.txt", "one", "ONE"))]) as server:
        env = {**cli_env, **model_env(server), "COLUMNS": "60", "LINES": "24", "TERM": "xterm-256color",
               "NO_COLOR": "1"}
        code, output = run_in_terminal([*ctxagent_exe(), "batch", str(tasks), "--out", str(tmp_path / "out"), "--yes",
                                        "--workers", "2"], env, 60)
    assert code == 0, output
    assert "\x1b[3" not in output and "\x1b[1m" not in output  # NO_COLOR: no colour, no bold
    lines = [line for line in screen(output) if line]
    assert all(len(line) <= 60 for line in lines), lines
    assert any(line.startswith("a: finished") for line in lines) and any(line.startswith("b: finished")
                                                                          for line in lines)
    status = " · ".join(line for line in lines if not line.startswith(("a: ", "b: ")))
    for item in ("2/2 done", "0 running", "0 failed", "0 waiting", "0 skipped", "cost unknown"):
        assert item in status, lines  # never broken inside an item
    assert API_KEY not in output


def test_batch_help_imports_neither_ray_nor_the_model_client(cli_env: dict) -> None:
    """`ctxagent batch --help` must stay instant: Ray alone takes seconds to import."""
    probe = ("import sys\nfrom ctxagent.cli.main import main\ntry:\n    main(['batch', '--help'])\n"
             "except SystemExit:\n    pass\n"
             "print(sorted({m.split('.')[0] for m in sys.modules} & {'ray', 'openai', 'httpx', 'filelock'}),"
             " file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", probe], env=cli_env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "--command-timeout" in done.stdout, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "[]", done.stderr


def test_a_task_that_failed_before_its_model_is_named_after_the_batchs(tmp_path: Path, cli_env: dict) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    (repo / "a.txt").write_text("one\n")
    subprocess.run(["git", "add", "."], cwd=repo, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"], cwd=repo, check=True)
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"instance_id": "bad", "repo": "r", "base_commit": "0" * 40,
                                 "problem_statement": "TASK bad: x"}) + "\n" +
                     json.dumps({"instance_id": "ok", "repo": "r", "problem_statement": "TASK ok: x"}) + "\n")
    with FakeOpenAI(rules=[edit_rule("TASK ok:", update_patch("a.txt", "one", "ONE"))]) as server:
        env = {**cli_env, **model_env(server)}
        code, _, err = run_cli(tasks, tmp_path / "out", env, "--workers", "1", "--model", "fake-model")
    assert code == 1, err
    preds = [json.loads(x) for x in (tmp_path / "out" / "preds.jsonl").read_text().splitlines()]
    assert [(p["instance_id"], p["model_name_or_path"], bool(p["model_patch"])) for p in preds] == [
        ("bad", "ctxagent__fake-model", False), ("ok", "ctxagent__fake-model", True)]
    lines = [json.loads(x) for x in (tmp_path / "out" / "results.jsonl").read_text().splitlines()]
    assert "is not a commit of that repository" in lines[0]["reason"]


def test_the_batch_goes_on_when_its_json_reader_goes_away(tmp_path: Path, cli_env: dict) -> None:
    """`ctxagent batch ... --json | head -1`, a killed `jq`: the tasks still run and are recorded."""
    import os

    tasks = _two_tasks(tmp_path)
    with FakeOpenAI(rules=[edit_rule("TASK a:", update_patch("a.txt", "one", "ONE"))]) as server:
        reader, writer = os.pipe()
        proc = subprocess.Popen([*ctxagent_exe(), "batch", str(tasks), "--out", str(tmp_path / "out"), "--yes",
                                 "--json", "--workers", "1"], env={**cli_env, **model_env(server)}, stdout=writer,
                                stderr=subprocess.PIPE, text=True)
        os.close(writer)
        os.close(reader)  # the reader is gone before the first event: every write meets a closed pipe
        err = proc.communicate(timeout=300)[1]
    assert proc.returncode == 0, err
    assert "stdout was closed; the batch goes on" in err
    lines = [json.loads(x) for x in (tmp_path / "out" / "results.jsonl").read_text().splitlines()]
    assert sorted(r["id"] for r in lines) == ["a", "b"] and all(r["status"] == "finished" for r in lines)
