"""Moving a leading `<think>...</think>` block out of streamed content (case C06's neighbour).

Qwen3, QwQ and the DeepSeek-R1 distills, served without a reasoning parser (older
Ollama, llama.cpp without `--reasoning-format`, vLLM without `--reasoning-parser`), put
their reasoning inside `content` as `<think>...</think>` before the answer. Only a block
at the very start of the content (after optional whitespace) is moved; `<think>`
anywhere else is ordinary text. Tags split across deltas are handled by holding back
the few characters that might begin a tag.
"""

from __future__ import annotations

from typing import Literal

OPEN, CLOSE = "<think>", "</think>"
Piece = tuple[Literal["text", "reasoning"], str]


class ThinkTagSplitter:
    """Feed content deltas; get back ("text" | "reasoning", piece) pairs in order."""

    def __init__(self) -> None:
        self._state: Literal["start", "think", "after", "text"] = "start"
        self._buf = ""

    def feed(self, content: str) -> list[Piece]:
        """Take one content delta; return what can be emitted now (possibly nothing)."""
        self._buf += content
        out: list[Piece] = []
        while self._buf:
            if self._state == "start" and not self._decide_start():
                break
            if self._state == "think" and not self._think(out):
                break
            if self._state == "after":
                self._buf = self._buf.lstrip()
                if not self._buf:
                    break
                self._state = "text"
            if self._state == "text":
                out.append(("text", self._buf))
                self._buf = ""
        return out

    def flush(self) -> list[Piece]:
        """End of stream: whatever is held back, as reasoning inside a block, else as text."""
        buf, self._buf = self._buf, ""
        if not buf or self._state == "after":
            return []
        return [("reasoning" if self._state == "think" else "text", buf)]

    def _decide_start(self) -> bool:
        stripped = self._buf.lstrip()
        if stripped.startswith(OPEN):
            self._buf = stripped[len(OPEN):]
            self._state = "think"
            return True
        if OPEN.startswith(stripped):
            return False  # whitespace or a partial "<thi": wait for more
        self._state = "text"
        return True

    def _think(self, out: list[Piece]) -> bool:
        end = self._buf.find(CLOSE)
        if end >= 0:
            if end:
                out.append(("reasoning", self._buf[:end]))
            self._buf = self._buf[end + len(CLOSE):]
            self._state = "after"
            return True
        keep = _partial_tag_suffix(self._buf, CLOSE)
        if len(self._buf) > keep:
            out.append(("reasoning", self._buf[: len(self._buf) - keep]))
            self._buf = self._buf[len(self._buf) - keep:]
        return False


def _partial_tag_suffix(text: str, tag: str) -> int:
    """Length of the longest suffix of `text` that is a proper prefix of `tag`."""
    for n in range(min(len(tag) - 1, len(text)), 0, -1):
        if text.endswith(tag[:n]):
            return n
    return 0
