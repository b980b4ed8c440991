"""An MCP tool result as the text an observation holds: text content joined, each image,
audio or resource described in one line, structured content as JSON when there is no text."""

from __future__ import annotations

import json
from typing import Any


def result_text(result: Any) -> str:
    """The text of a `CallToolResult` (`content` blocks, `structured_content`); "(no output)" when empty."""
    parts = [_block(block) for block in getattr(result, "content", None) or []]
    parts = [part for part in parts if part]
    structured = getattr(result, "structured_content", None)
    if not parts and structured is not None:
        parts.append(json.dumps(structured, ensure_ascii=False, default=str))
    return "\n".join(parts) if parts else "(no output)"


def _block(block: Any) -> str:
    kind = getattr(block, "type", "")
    if kind == "text":
        return str(block.text)
    if kind in ("image", "audio"):
        return f"[{kind}: {block.mime_type}, {_decoded_size(block.data):,} bytes, not shown]"
    if kind == "resource_link":
        mime = f", {block.mime_type}" if getattr(block, "mime_type", None) else ""
        return f"[resource link: {block.name} {block.uri}{mime}]"
    if kind == "resource":
        res = block.resource
        size = f"{len(res.text):,} characters" if hasattr(res, "text") else f"{_decoded_size(res.blob):,} bytes"
        mime = f", {res.mime_type}" if getattr(res, "mime_type", None) else ""
        return f"[resource: {res.uri}{mime}, {size}, not shown]"
    return f"[{kind or 'unknown'} content, not shown]"


def _decoded_size(data: str) -> int:
    """Bytes that base64 text `data` decodes to."""
    data = data.strip()
    return len(data) * 3 // 4 - (len(data) - len(data.rstrip("=")))
