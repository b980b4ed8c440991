"""What a memory is: `MemoryItem`, the four memory types, and input checks.

Types (Hello-Agents textbook, chapter 8): `working` (the current task's short-lived
facts), `episodic` (events: what happened, when), `semantic` (knowledge and rules that
hold beyond one task) and `perceptual` (something seen or heard: a file path and its
modality). Importance is a number in [0, 1] (textbook default 0.5).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import PurePath
from typing import Any

from ctxagent.errors import NotFoundError, ToolInputError
from ctxagent.redaction import redact

MEMORY_TYPES = ("working", "episodic", "semantic", "perceptual")
DEFAULT_IMPORTANCE = 0.5
MAX_CONTENT_CHARS = 100_000  # one memory; longer text belongs in the knowledge base (rag)

_MODALITY_BY_SUFFIX = {
    "image": (".png", ".jpg", ".jpeg", ".gif", ".bmp", ".webp", ".svg", ".tif", ".tiff"),
    "audio": (".mp3", ".wav", ".m4a", ".flac", ".ogg", ".aac"),
    "video": (".mp4", ".mov", ".avi", ".mkv", ".webm"),
    "document": (".pdf", ".doc", ".docx", ".ppt", ".pptx", ".xls", ".xlsx", ".md", ".txt", ".html"),
}
_MODALITY_RE = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")
_ID_PREFIX_RE = re.compile(r"^[0-9a-f-]{4,36}$")


@dataclass
class MemoryItem:
    """One stored memory. Times are Unix seconds; `metadata` is free-form JSON data."""

    id: str
    content: str
    memory_type: str
    importance: float
    created_at: float
    updated_at: float
    user_id: str = "default_user"
    file_path: str | None = None
    modality: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_dict(self, score: float | None = None) -> dict[str, Any]:
        """The library/JSON form: id, content, memory_type, importance, timestamp (ISO
        8601, creation time), updated_at, user_id, file_path, modality, metadata
        [, score rounded to 4 places]."""
        row: dict[str, Any] = {
            "id": self.id, "content": self.content, "memory_type": self.memory_type,
            "importance": round(self.importance, 4), "timestamp": iso(self.created_at),
            "updated_at": iso(self.updated_at), "user_id": self.user_id,
            "file_path": self.file_path, "modality": self.modality, "metadata": self.metadata,
        }
        if score is not None:
            row["score"] = round(score, 4)
        return row

    @classmethod
    def from_row(cls, row: Any) -> "MemoryItem":
        """Build from a `memories` table row (sqlite3.Row or mapping)."""
        return cls(id=row["id"], content=row["content"], memory_type=row["memory_type"],
                   importance=row["importance"], created_at=row["created_at"],
                   updated_at=row["updated_at"], user_id=row["user_id"], file_path=row["file_path"],
                   modality=row["modality"], metadata=json.loads(row["metadata"] or "{}"))


def iso(epoch: float) -> str:
    """Unix seconds -> local ISO 8601 with UTC offset, to the second."""
    return datetime.fromtimestamp(epoch).astimezone().isoformat(timespec="seconds")


def check_type(memory_type: str, allowed: tuple[str, ...] = MEMORY_TYPES) -> str:
    """Return `memory_type` if it is one of `allowed`; else ToolInputError listing them."""
    if memory_type not in allowed:
        raise ToolInputError(f"unknown memory_type {memory_type!r}; use one of: {', '.join(allowed)}")
    return memory_type


def check_importance(value: Any) -> float:
    """Importance as a float in [0, 1]; ToolInputError otherwise (bools and NaN refused)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise ToolInputError(f"importance must be a number from 0 to 1, got {value!r}")
    if not 0.0 <= float(value) <= 1.0:
        raise ToolInputError(f"importance must be between 0 and 1 (inclusive), got {value}")
    return float(value)


def check_content(content: Any) -> str:
    """Non-blank text of at most MAX_CONTENT_CHARS characters, API-key-shaped strings
    replaced (`ctxagent.redaction`: whoever adds it, a memory is stored state); ToolInputError otherwise."""
    if not isinstance(content, str) or not content.strip():
        raise ToolInputError("content is required: the text to remember (a non-empty string)")
    if "\x00" in content:
        raise ToolInputError("content must not contain NUL characters")
    if len(content) > MAX_CONTENT_CHARS:
        raise ToolInputError(f"content is {len(content)} characters; a memory holds at most "
                             f"{MAX_CONTENT_CHARS}. Store long documents with the rag tool instead")
    return redact(content)


def check_modality(modality: str | None, file_path: str | None) -> str | None:
    """The modality given (a short lowercase word), else inferred from `file_path`'s suffix."""
    if modality is not None:
        modality = modality.strip().lower()
        if not _MODALITY_RE.match(modality):
            raise ToolInputError(f"modality must be a short word such as image, audio, text; got {modality!r}")
        return modality
    if not file_path:
        return None
    suffix = PurePath(file_path).suffix.lower()
    return next((kind for kind, suffixes in _MODALITY_BY_SUFFIX.items() if suffix in suffixes), "text")


def check_id(memory_id: Any) -> str:
    """A memory id or a unique prefix of one (4+ hex characters); NotFoundError otherwise."""
    if not isinstance(memory_id, str) or not _ID_PREFIX_RE.match(memory_id.strip().lower()):
        raise NotFoundError(f"no memory with id {memory_id!r}: ids look like 3f2a9c1e-..., "
                            "as returned by add and search")
    return memory_id.strip().lower()
