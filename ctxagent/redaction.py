"""Keep secrets out of everything ctxagent writes or prints (DESIGN.md section 6, rule 4).

`redact(value, secrets)` returns a copy of a JSON-like value (dicts, lists, strings)
in which:

- values under keys named like credentials (`api_key`, `authorization`, `password`,
  `secret`, `access_token`, `*_api_key`...) are replaced by REDACTED;
- every occurrence of each string in `secrets` (the configured API keys,
  `Settings.secrets()`; strings shorter than MIN_SECRET_LEN are ignored) is replaced;
- strings shaped like API keys (`sk-...`, `ghp_...`, `xoxb-...`, `AKIA...`, `hf_...`,
  `Bearer ...`) are replaced even when nobody named them.

One implementation for transcripts, snapshots, `--json` output, crash logs, episodic
memories, the console renderer and `ctxagent tool` output, and the arguments of the
tools that store what they are given (`ctxagent.agent.toolcalls.redacted_arguments`).
`StreamRedactor` applies it to text that arrives in pieces (a streamed answer).
"""

from __future__ import annotations

import re
from typing import Any, Iterable

REDACTED = "[REDACTED]"
#: Strings shorter than this are never treated as secrets (they would redact ordinary words).
MIN_SECRET_LEN = 6
_SECRET_KEYS = re.compile(
    r"^(?:api[-_]?key|x-api-key|authorization|proxy-authorization|password|passwd|secret|client[-_]secret|"
    r"access[-_]token|refresh[-_]token|id[-_]token|session[-_]token|bearer|cookie|set-cookie|[a-z_]*_api_key)$",
    re.IGNORECASE,
)
_SECRET_VALUES = re.compile(
    r"\b(?:sk-[A-Za-z0-9_-]{16,}|sk-ant-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|xox[abpr]-[A-Za-z0-9-]{10,}"
    r"|AKIA[0-9A-Z]{16}|hf_[A-Za-z0-9]{20,})\b|(?i:bearer)\s+[A-Za-z0-9._~+/=-]{12,}"
)


def redact(value: Any, secrets: Iterable[str] = ()) -> Any:
    """A copy of `value` (JSON-like) with credentials, the `secrets` strings and
    API-key-shaped strings replaced by REDACTED (see the module doc). Other types are
    returned as they are; tuples come back as lists."""
    known = sorted({s for s in secrets if isinstance(s, str) and len(s) >= MIN_SECRET_LEN}, key=len, reverse=True)
    return _redact(value, known)


def _redact(value: Any, known: list[str]) -> Any:
    if isinstance(value, dict):
        return {k: REDACTED if isinstance(k, str) and _SECRET_KEYS.match(k) else _redact(v, known)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_redact(v, known) for v in value]
    if isinstance(value, str):
        for secret in known:
            value = value.replace(secret, REDACTED)
        return _SECRET_VALUES.sub(REDACTED, value)
    return value


#: Most characters a StreamRedactor holds back (a key-shaped run longer than this is let through in pieces).
MAX_HELD_CHARS = 256
_KEY_CHARS = frozenset(chr(c) for c in range(0x21, 0x7F))  # printable ASCII but space: what API keys are made of
_BEARER_TAIL = re.compile(r"(?i:bearer)\s+$")


class StreamRedactor:
    """`redact` for text that arrives in pieces (a streamed model answer).

    `feed(piece)` returns only the text that can no longer be part of a secret: it holds
    back the trailing run of printable ASCII without spaces (what keys are made of; at
    most MAX_HELD_CHARS), and a `Bearer` word with the space after it, so a secret split
    across pieces is redacted as if the text had come whole. Text in other scripts
    (Chinese...) and English up to each space comes out at once. `flush()` returns what
    is held (call it when the stream ends or is interrupted).
    """

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self.secrets = list(secrets)
        self._held = ""
        self._before = ""  # the last character shown, when it cannot be part of a match (for \b)

    def feed(self, piece: str) -> str:
        """Add `piece`; return the redacted text that is ready to show (may be "")."""
        text = self._held + piece
        cut = _safe_cut(text)
        self._held = text[cut:]
        return self._emit(text[:cut])

    def flush(self) -> str:
        """Return everything held back, redacted, and start empty."""
        text, self._held = self._held, ""
        return self._emit(text)

    def _emit(self, ready: str) -> str:
        if not ready:
            return ""
        before = self._before
        self._before = "" if ready[-1] in _KEY_CHARS else ready[-1]
        return redact(before + ready, self.secrets)[len(before):]


def _safe_cut(text: str) -> int:
    """Where `text` may be cut so that no secret straddles the cut: the start of the
    trailing key-character run, moved before any `Bearer<space>` (and the run holding
    that word) that ends there; never more than MAX_HELD_CHARS before the end."""
    cut = _run_start(text, len(text))
    while True:
        bearer = _BEARER_TAIL.search(text, max(0, cut - 64), cut)
        if bearer is None:
            return cut
        start = _run_start(text, bearer.start() + len("bearer"))
        if start >= cut or len(text) - start > MAX_HELD_CHARS:
            return cut
        cut = start


def _run_start(text: str, end: int) -> int:
    i = end
    while i > 0 and text[i - 1] in _KEY_CHARS and len(text) - (i - 1) <= MAX_HELD_CHARS:
        i -= 1
    return i
