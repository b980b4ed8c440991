"""End-to-end fixtures: the REAL `ctxagent` console script in a subprocess, against the fake
OpenAI server started as a subprocess, on a fresh git repository made in tmp.

Only the model is fake. HOME and XDG_* point into tmp so no user config leaks in, and the
offline model is made unavailable so a missing setting can never start it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

ROOT = Path(__file__).resolve().parents[2]
FAKE_SERVER = ROOT / "tests" / "support" / "fake_openai.py"
API_KEY = "sk-e2e-SECRET-0123456789abcdef"
APP_PY = 'def greet(name):\n    return "hello " + name\n\n\nif __name__ == "__main__":\n    print(greet("world"))\n'


def ctxagent_exe() -> list[str]:
    """The installed console script next to this Python (falls back to `python -m`)."""
    script = Path(sys.executable).parent / "ctxagent"
    return [str(script)] if script.exists() else [sys.executable, "-m", "ctxagent.cli.main"]


@dataclass
class FakeServer:
    """A fake server subprocess: `base_url`, and `requests()` read from its requests file."""

    base_url: str
    requests_file: Path

    def requests(self) -> list[dict[str, Any]]:
        if not self.requests_file.exists():
            return []
        lines = self.requests_file.read_text(encoding="utf-8").splitlines()
        return [r["body"] for r in map(json.loads, lines) if r["method"] == "POST"]


@pytest.fixture
def fake_server(tmp_path: Path) -> Iterator[Callable[[list[dict[str, Any]]], FakeServer]]:
    """Factory `start(steps, rules=()) -> FakeServer` (rules: see tests/support/fake_openai.py);
    every process is ended at teardown."""
    procs: list[subprocess.Popen] = []

    def start(steps: list[dict[str, Any]], rules: list[dict[str, Any]] = ()) -> FakeServer:
        n = len(procs)
        script, port_file, requests = (tmp_path / f"script{n}.json", tmp_path / f"port{n}", tmp_path / f"req{n}.jsonl")
        script.write_text(json.dumps({"steps": steps, "default_text": "done", "rules": list(rules)}), encoding="utf-8")
        proc = subprocess.Popen([sys.executable, str(FAKE_SERVER), "--script", str(script), "--port-file",
                                 str(port_file), "--requests-file", str(requests)])
        procs.append(proc)
        deadline = time.monotonic() + 30
        while not port_file.exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("fake server did not start")
            time.sleep(0.02)
        return FakeServer(f"http://127.0.0.1:{port_file.read_text().strip()}/v1", requests)

    yield start
    for proc in procs:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A small real git repository: README.md, src/app.py, tests/test_app.py, one commit."""
    path = tmp_path / "proj"
    (path / "src").mkdir(parents=True)
    (path / "tests").mkdir()
    (path / "README.md").write_text("# proj\n\nA tiny greeting program.\n", encoding="utf-8")
    (path / "src" / "app.py").write_text(APP_PY, encoding="utf-8")
    (path / "tests" / "test_app.py").write_text("from src.app import greet\n\n\ndef test_greet():\n"
                                                "    assert greet('a') == 'hello a'\n", encoding="utf-8")
    if shutil.which("git"):
        env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
               "GIT_COMMITTER_EMAIL": "t@t"}
        for args in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "init"]):
            subprocess.run(["git", *args], cwd=path, env=env, check=True, capture_output=True)
    return path


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """A clean environment for the CLI: tmp HOME/XDG, no provider variables, no offline model."""
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "SYSTEMROOT", "TMPDIR")}
    keep["PYTHONPATH"] = str(ROOT)  # this checkout's ctxagent, even when the console script is installed from another
    home = tmp_path / "home"
    home.mkdir()
    return {**keep, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_STATE_HOME": str(home / ".state"), "CTXAGENT_LOCAL_MODEL": "/nonexistent/model.gguf",
            "PYTHONUNBUFFERED": "1", "COLUMNS": "120"}


@pytest.fixture
def ctxagent(env: dict[str, str]) -> Callable[..., subprocess.CompletedProcess]:
    """`ctxagent(*args, input=None, extra_env=None)` runs the real CLI and returns the completed process."""

    def run(*args: str, input: str | None = None, extra_env: dict[str, str] | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess:
        return subprocess.run([*ctxagent_exe(), *args], input=input if input is not None else "",
                              env={**env, **(extra_env or {})}, capture_output=True, text=True, timeout=timeout)

    return run


def model_env(server: FakeServer) -> dict[str, str]:
    """Environment pointing the CLI at `server` with an API key that must never be written anywhere."""
    return {"CTXAGENT_BASE_URL": server.base_url, "CTXAGENT_MODEL": "fake-model", "CTXAGENT_API_KEY": API_KEY}


def session_snapshots(repo: Path) -> tuple[str, dict[int, dict], dict[int, str]]:
    """The one session's snapshots under `repo`: (session id, {call: read whole}, {call: raw
    text of its file and of the objects file it refers to})."""
    from ctxagent.context.record.snapshot import load_snapshot_file

    [folder] = (repo / ".ctxagent" / "snapshots").iterdir()
    objects = folder / "objects.jsonl"
    shared = objects.read_text(encoding="utf-8") if objects.exists() else ""
    files = {int(p.stem): p for p in folder.glob("*.json")}
    raw = {n: p.read_text(encoding="utf-8") + "\n" + shared for n, p in files.items()}
    return folder.name, {n: load_snapshot_file(p) for n, p in files.items()}, raw


def flat(output: str) -> str:
    """`output` with every run of white space as one space (rich wraps long lines)."""
    return " ".join(output.split())


def write_modules(repo: Path, count: int, key_shaped: str | None = None) -> None:
    """`m0.py` .. `m<count-1>.py` in `repo`, about 1,000 tokens each (100 `def parse_cfg_i_j`
    lines); `key_shaped`, if given, as a TOKEN assignment in m0.py."""
    for i in range(count):
        lines = [f"def parse_cfg_{i}_{j}(path):  # module {i}\n" for j in range(100)]
        if i == 0 and key_shaped is not None:
            lines.insert(3, f'TOKEN = "{key_shaped}"\n')
        (repo / f"m{i}.py").write_text("".join(lines), encoding="utf-8")
