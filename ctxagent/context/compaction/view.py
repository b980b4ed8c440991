"""`CompactedView`: how the assembler sees the loop's history after a compaction.

The compaction's messages in place of the first `base_len` history messages, then every
message since; re-anchored on each call by fingerprints of the covered messages.
`to_record` / `restore` let a resumed session reuse it (docs/compaction.md).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Callable

from ctxagent.context.compaction.sections import is_summary_message
from ctxagent.context.messages import pairing_errors


def fingerprint(message: dict) -> str:
    """A stable digest of one message (keys sorted; non-JSON values via str)."""
    data = json.dumps(message, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.blake2b(data.encode("utf-8"), digest_size=16).hexdigest()


def prefix_digest(messages: list[dict], normalize: Callable[[Any], Any] | None = None) -> str:
    """One digest of `messages` in order (each `normalize`d first: the assembler passes its
    redaction, so live messages and the redacted ones a resumed history holds agree)."""
    digest = hashlib.blake2b(digest_size=16)
    for message in messages:
        digest.update(fingerprint(normalize(message) if normalize is not None else message).encode("ascii"))
    return digest.hexdigest()


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

    def to_record(self, convo: list[dict], normalize: Callable[[Any], Any] | None = None) -> dict[str, Any]:
        """This view as JSON-ready data, for `restore` in a later process: `covers` (how many
        messages of `convo` it stands for), `digest` (`prefix_digest` of them) and `messages`,
        one entry per prefix message: `{"from": i}` for `convo[i]` unchanged, `{"from": i,
        "message": m}` for a changed copy (masked, cut), `{"message": m}` for a summary."""
        entries: list[dict[str, Any]] = []
        for message, origin in zip(self.prefix, self.origins):
            if origin is None:
                entries.append({"message": message})
            elif message is convo[origin] or message == convo[origin]:
                entries.append({"from": origin})
            else:
                entries.append({"from": origin, "message": message})
        return {"covers": self.base_len, "digest": prefix_digest(convo[:self.base_len], normalize),
                "messages": entries}

    def restore(self, record: Any, convo: list[dict], normalize: Callable[[Any], Any] | None = None) -> str | None:
        """Take the view of `record` (`to_record`) for `convo`: None when it was taken, else why
        not (the view is then empty and `convo` is seen as it is). Taken only when the history
        still starts with the messages it covers, the task's first user message is in it
        unchanged, and the view with the messages after it keeps every call paired."""
        self.__init__()
        if not isinstance(record, dict):
            return "the record is not an object"
        covers, digest, entries = record.get("covers"), record.get("digest"), record.get("messages")
        if not isinstance(covers, int) or isinstance(covers, bool) or covers < 1 or not isinstance(entries, list):
            return "the record has no valid covers/messages fields"
        if covers > len(convo):
            return f"it covers {covers} messages but the history has {len(convo)}"
        if digest != prefix_digest(convo[:covers], normalize):
            return f"the history no longer starts with the {covers} messages it covers: was the transcript edited?"
        prefix: list[dict] = []
        origins: list[int | None] = []
        verbatim: set[int] = set()
        for n, entry in enumerate(entries):
            origin = entry.get("from") if isinstance(entry, dict) else None
            message = entry.get("message") if isinstance(entry, dict) else None
            if origin is not None and (not isinstance(origin, int) or isinstance(origin, bool)
                                       or not 0 <= origin < covers):
                return f"entry {n} names message {origin!r}, outside the {covers} it covers"
            if message is None and origin is not None:
                message = convo[origin]
                verbatim.add(origin)
            if not isinstance(message, dict) or not isinstance(message.get("role"), str):
                return f"entry {n} is neither a message nor the index of one"
            prefix.append(message)
            origins.append(origin)
        task = next((i for i, m in enumerate(convo[:covers]) if m.get("role") == "user" and not is_summary_message(m)),
                    None)
        if task is not None and task not in verbatim:
            return "it does not keep the task's first user message unchanged"
        problems = pairing_errors(prefix + convo[covers:])
        if problems:
            return f"it would leave the calls and results unpaired ({problems[0]})"
        self.base_len = covers
        self.anchors = (fingerprint(convo[0]), fingerprint(convo[covers - 1]))
        self.prefix, self.origins = prefix, origins
        return None
