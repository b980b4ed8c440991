"""Memory results as compact text for the model (no colour codes, ids shortened to 8).

Ids are shown as their first 8 characters; every action that takes a `memory_id`
accepts such a unique prefix.
"""

from __future__ import annotations

from typing import Any

SNIPPET_CHARS = 200


def short(text: str, limit: int = SNIPPET_CHARS) -> str:
    """`text` on one line, cut to `limit` characters with "..." when longer."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def render_item_rows(rows: list[dict[str, Any]], empty: str) -> str:
    """One line per memory: id, type, importance, [score], date, then the content."""
    if not rows:
        return empty
    lines = []
    for row in rows:
        score = f" score={row['score']:.2f}" if row.get("score") is not None else ""
        lines.append(f"- {row['id'][:8]} [{row['memory_type']}] importance={row['importance']:.2f}{score} "
                     f"({row['timestamp'][:16].replace('T', ' ')})")
        lines.append(f"  {short(row['content'])}")
        if row.get("file_path"):
            lines.append(f"  file: {row['file_path']} ({row.get('modality') or 'text'})")
    return "\n".join(lines)


def render_stats(data: dict[str, Any]) -> str:
    """Totals per type and the span of time covered."""
    kinds = ", ".join(f"{kind}={info['count']} (avg importance {info['avg_importance']:.2f})"
                      for kind, info in data["memories_by_type"].items())
    span = f"; oldest {data['oldest'][:10]}, newest {data['newest'][:10]}" if data.get("oldest") else ""
    return (f"{data['total_memories']} memories: {kinds}{span}; search: {data['search_backend']}; "
            f"db {data['db_bytes']} bytes")


def render_summary(data: dict[str, Any]) -> str:
    """Totals, the most important memories, then the newest ones."""
    kinds = ", ".join(f"{kind}={info['count']}" for kind, info in data["memories_by_type"].items())
    parts = [f"{data['total_memories']} memories ({kinds})"]
    if data["important_memories"]:
        parts += ["most important:", render_item_rows(data["important_memories"], "")]
    if data["recent_memories"]:
        parts += ["most recent:", render_item_rows(data["recent_memories"], "")]
    return "\n".join(parts)
