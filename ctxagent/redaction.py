"""Keep secrets out of everything ctxagent writes or prints (docs/redaction.md).

`redact(value, secrets)` copies a JSON-like value with credential-named keys, the
configured secrets and the `ctxagent.secret_rules` matches replaced by REDACTED;
idempotent, never raises. `StreamRedactor` does it for streamed text. What the model is
sent is not redacted: docs/redaction.md.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

from ctxagent import secret_blocks
from ctxagent import secret_rules as rules
from ctxagent.secret_rules import REDACTED

#: Strings shorter than this are never treated as secrets (they would redact ordinary words).
MIN_SECRET_LEN = 6
_SECRET_KEYS = re.compile(
    r"^(?:api[-_]?key|x-api-key|authorization|proxy-authorization|password|passwd|secret|client[-_]secret|"
    r"access[-_]token|refresh[-_]token|id[-_]token|session[-_]token|bearer|cookie|set-cookie|[a-z_]*_api_key)$",
    re.IGNORECASE,
)


def redact(value: Any, secrets: Iterable[str] = ()) -> Any:
    """A copy of `value` (JSON-like) with credentials, the `secrets` strings and
    API-key-shaped strings replaced by REDACTED (see the module doc). Other types are
    returned as they are; tuples come back as lists."""
    return _redact(value, _known(secrets))


def redact_known(text: str, secrets: Iterable[str]) -> str:
    """`text` with each of the `secrets` strings (MIN_SECRET_LEN or longer) replaced by
    REDACTED, and nothing else changed: for what the model reads, where key-shaped strings
    in the user's own files must stay as they are."""
    for secret in _known(secrets):
        text = text.replace(secret, REDACTED)
    return text


def _known(secrets: Iterable[str]) -> list[str]:
    """The `secrets` strings of MIN_SECRET_LEN or more, longest first (so a secret that
    contains another is replaced whole)."""
    return sorted({s for s in secrets if isinstance(s, str) and len(s) >= MIN_SECRET_LEN}, key=len, reverse=True)


def _redact(value: Any, known: list[str]) -> Any:
    if isinstance(value, dict):
        return {k: _redact_entry(k, v, known) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_redact(v, known) for v in value]
    if isinstance(value, str):
        return _redact_text(value, known)
    return value


def _redact_entry(key: Any, value: Any, known: list[str]) -> Any:
    if isinstance(key, str):
        if _SECRET_KEYS.match(key):
            return REDACTED
        if isinstance(value, str) and rules.SECRET_NAME.search(key) and rules.looks_secret(value.strip()):
            return REDACTED
    return _redact(value, known)


def _redact_text(text: str, known: list[str]) -> str:
    """`text` with the `known` strings, then each rule of `ctxagent.secret_rules`, replaced
    (the rules whose literal start is absent are skipped: a substring test is ~100 times
    cheaper than a regex pass)."""
    for secret in known:
        text = text.replace(secret, REDACTED)
    if "-----BEGIN" in text:
        text = rules.PEM.sub(REDACTED, text)
    if "PRIVATE KEY" in text:
        text = secret_blocks.redact_key_blocks(text)
        if "-----END" in text:
            text = rules.PEM_ONE_LINE.sub(lambda m: m["begin"] + m["sep"] + REDACTED + m["sep"] + m["end"], text)
            text = _redact_key_tails(text)
    if "://" in text:
        text = rules.URL_PASSWORD.sub(rules.replace_url_password, text)
    text = rules.SHAPES.sub(REDACTED, text)
    for literal, form in rules.FORMS:
        if literal in text:
            text = form.sub(rules.replace_form, text)
    if "define(" in text:
        text = rules.DEFINE.sub(rules.replace_define, text)
    if "=" in text or ":" in text:
        text = rules.KV.sub(rules.replace_kv_value, text)
    return text


_B64 = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")
_WRITTEN_BREAKS = ("\\n", "\\r")  # the two characters `\n` of a JSON string


def _redact_key_tails(text: str) -> str:
    """The base64 lines right before each `-----END ... PRIVATE KEY-----` label as one
    REDACTED (a key printed without its BEGIN line: `tail`). One backward walk per label."""
    out, done = [], len(text)
    for match in reversed(list(rules.PEM_END.finditer(text, 0))):
        if match.end() > done:
            continue
        last = _break_back(text, match.start())
        cut, pos = match.start(), last
        while pos is not None:
            top = _b64_line_back(text, pos)
            if top is None:
                break
            cut, pos = top, _break_back(text, top)
        if cut < match.start():
            out += [text[match.start():done], text[last:match.start()], REDACTED]
            done = cut
    out.append(text[:done])
    return "".join(reversed(out))


def _break_back(text: str, pos: int) -> int | None:
    """Start of the blanks and line breaks ending at `pos`; None when they hold no break."""
    i, breaks = pos, 0
    while True:
        if i >= 1 and text[i - 1] in " \t\r\n":
            breaks += text[i - 1] in "\r\n"
            i -= 1
        elif i >= 2 and text[i - 2:i] in _WRITTEN_BREAKS:
            breaks, i = breaks + 1, i - 2
        else:
            return i if breaks else None


def _b64_line_back(text: str, pos: int) -> int | None:
    """Start of the base64-only line ending at `pos`, if it starts a line (the text's
    start, a line break, a written `\n`, a quote); else None."""
    i = pos
    while i >= 1 and text[i - 1] in _B64 and not (i >= 2 and text[i - 2:i] in _WRITTEN_BREAKS):
        i -= 1
    if i == pos:
        return None
    if i == 0 or text[i - 1] in "\n\"'" or (i >= 2 and text[i - 2:i] in _WRITTEN_BREAKS):
        return i
    return None


#: Most characters a StreamRedactor holds back for a run without spaces or a `NAME = value`
#: line (a key-shaped run longer than this is let through in pieces; JWTs reach ~1,000).
MAX_HELD_CHARS = 1024
#: Most characters held back for a private key block still arriving (RSA 4096 is ~3,300).
MAX_PEM_HELD_CHARS = 16384
_KEY_CHARS = frozenset(chr(c) for c in range(0x21, 0x7F))  # printable ASCII but space: what API keys are made of
_KEY_RUN = re.compile(r"[!-~]*")
_BEARER_TAIL = re.compile(r"(?i:bearer)\s+\Z")
#: Most beginnings of secrets one cut is moved back over (`Authorization: Bearer ` is two).
_MAX_CHAIN = 8


class StreamRedactor:
    """`redact` for text that arrives in pieces (a streamed answer): `feed(piece)` returns only
    text that can no longer be part of a secret (what it holds back is listed in
    docs/redaction.md, "Streaming"); `flush()` returns what is held, at the stream's end."""

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
    trailing key-character run, moved before any secret that may still be arriving and
    ends there (`_open_secret`; a chain of at most _MAX_CHAIN, such as `Authorization:
    Bearer `), as long as no more than its limit is held."""
    cut = _run_start(text, len(text))
    for _ in range(_MAX_CHAIN):
        start, limit = _open_secret(text, cut)
        if start is None or start >= cut or len(text) - start > limit:
            break
        cut = start
    return cut


def _open_secret(text: str, cut: int) -> tuple[int | None, int]:
    """The start (of its key-character run) of a secret's beginning that ends at `cut` and
    could go on with the text still to come, and how many characters may be held for it:
    `Bearer<space>`, `NAME = ` (`ctxagent.secret_rules.KV_OPEN_TAIL`), or a private key
    block whose END line has not come. (None, 0) when there is none."""
    for tail in (_BEARER_TAIL, rules.KV_OPEN_TAIL, rules.FORMS_OPEN_TAIL):
        match = tail.search(text, max(0, cut - 200), cut)
        if match is not None:
            return _run_start(text, match.start()), MAX_HELD_CHARS
    begin = text.rfind("-BEGIN", max(0, cut - MAX_PEM_HELD_CHARS), cut)  # `cut -c 3-` leaves fewer dashes
    while begin > 0 and text[begin - 1] == "-":
        begin -= 1
    if begin >= 0 and rules.PEM_OPEN.match(text, begin, cut) and not rules.PEM_END.search(text, begin, cut):
        return _run_start(text, begin), MAX_PEM_HELD_CHARS
    if "PRIVATE KEY" in text[max(0, cut - MAX_PEM_HELD_CHARS):cut]:  # a key printed with line prefixes
        begin = secret_blocks.open_block_start(text, max(0, cut - MAX_PEM_HELD_CHARS), cut)
        if begin is not None:
            return _run_start(text, begin), MAX_PEM_HELD_CHARS
    return None, 0


def _run_start(text: str, end: int) -> int:
    """Start of the run of key characters that ends at `end`, never more than
    MAX_HELD_CHARS before the end of `text` (scanned backwards, in C)."""
    low = max(0, len(text) - MAX_HELD_CHARS)
    if end <= low:
        return end
    return end - _KEY_RUN.match(text[low:end][::-1]).end()
