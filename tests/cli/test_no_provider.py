"""With no provider and no usable offline model, `ctxagent run` exits 2 with
`ctxagent.llm.local.bundle.no_model_error`: how to set a provider, `ctxagent doctor`, why the
offline model cannot run, and how to install it with the llama.cpp build flag.

The real CLI in a subprocess; the offline model is made unavailable through
CTXAGENT_LOCAL_MODEL (a missing or non-GGUF file), which works whether or not the
`local` extra is installed.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

BUILD_HINT = 'CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install -e ".[local]"'


def _run(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ctxagent.cli.main", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)


def _no_provider_env(tmp_path: Path, local_model: str) -> dict[str, str]:
    """Our environment minus every provider variable, a fresh HOME, and the offline model pointed at `local_model`."""
    keep = {k: v for k, v in os.environ.items()
            if not k.startswith("CTXAGENT_") and not k.endswith(("_API_KEY", "_BASE_URL"))}
    return {**keep, "HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
            "CTXAGENT_LOCAL_MODEL": local_model, "COLUMNS": "200"}


@pytest.mark.parametrize("model", ["absent.gguf", "notes.txt"])
def test_no_provider_and_no_offline_model_explains_both_ways_out(tmp_path: Path, model: str) -> None:
    (tmp_path / "notes.txt").write_text("not a model\n", encoding="utf-8")
    out = _run(["run", "x"], _no_provider_env(tmp_path, str(tmp_path / model)), tmp_path)
    assert out.returncode == 2, out.stderr
    err = out.stderr
    assert "no model provider is configured" in err
    if importlib.util.find_spec("llama_cpp") is not None:  # without the local extra, that is the reason given first
        assert f"CTXAGENT_LOCAL_MODEL='{tmp_path / model}' is neither a bundled model" in err  # the reason
    else:
        assert "llama-cpp-python[server] is not installed" in err
    for needle in ("OPENAI_API_KEY", "CTXAGENT_PROVIDER=deepseek", "--base-url", "`ctxagent doctor`", BUILD_HINT):
        assert needle in err, needle
    assert "Traceback" not in err + out.stdout


def test_commands_that_need_no_model_still_work_without_one(tmp_path: Path) -> None:
    out = _run(["tool", "terminal", '{"command": "ls"}', "--repo", str(tmp_path)],
               _no_provider_env(tmp_path, str(tmp_path / "absent.gguf")), tmp_path)
    assert out.returncode == 0, out.stderr
