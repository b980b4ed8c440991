"""`CompactedView`: how the assembler sees the loop's history after a compaction.

The loop's history only grows (the full record stays on disk), while the model is sent
a compacted view: the messages a compaction produced in place of the first `base_len`
history messages, then every message appended since. The view is re-anchored on each
call by fingerprints of the first and last covered messages; if the history no longer
starts with them (a new session, or the loop replaced its history with the output of
`ContextAssembler.compact`), the view resets and the history is taken as it is.
"""

from __future__ import annotations

import hashlib
import json


def fingerprint(message: dict) -> str:
    """A stable digest of one message (keys sorted; non-JSON values via str)."""
    data = json.dumps(message, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.blake2b(data.encode("utf-8"), digest_size=16).hexdigest()


class CompactedView:
    """The compacted prefix standing for `history[:base_len]`, with each prefix message's
    origin (its index in the conversation, or None for a synthetic summary message)."""

    def __init__(self) -> None:
        self.base_len = 0
        self.anchors: tuple[str, str] | None = None
        self.prefix: list[dict] = []
        self.origins: list[int | None] = []

    def copy(self) -> "CompactedView":
        twin = CompactedView()
        twin.base_len, twin.anchors = self.base_len, self.anchors
        twin.prefix, twin.origins = list(self.prefix), list(self.origins)
        return twin

    def _matches(self, convo: list[dict]) -> bool:
        if not self.base_len or self.anchors is None or len(convo) < self.base_len:
            return False
        return (fingerprint(convo[0]), fingerprint(convo[self.base_len - 1])) == self.anchors

    def apply(self, convo: list[dict]) -> tuple[list[dict], list[int | None]]:
        """(view, origins) for the conversation `convo` (history without system messages)."""
        if not self._matches(convo):
            self.__init__()
            return list(convo), list(range(len(convo)))
        tail = range(self.base_len, len(convo))
        return self.prefix + [convo[i] for i in tail], self.origins + list(tail)

    def install(self, convo: list[dict], view: list[dict], origins: list[int | None]) -> None:
        """Remember that `view` (with `origins`) now stands for all of `convo`."""
        self.base_len = len(convo)
        self.anchors = (fingerprint(convo[0]), fingerprint(convo[-1])) if convo else None
        self.prefix, self.origins = list(view), list(origins)

    def adopt(self, convo: list[dict]) -> None:
        """The loop keeps `convo` as its new history: the view is the history itself."""
        self.install(convo, convo, list(range(len(convo))))
