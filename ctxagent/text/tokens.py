"""Token counting: exact for OpenAI encodings (offline, `bpe-openai`), a calibrated estimate otherwise.

o200k_base for gpt-4o*, gpt-4.1*, gpt-4.5*, gpt-5*, o1*, o3*, o4*, chatgpt-4o*; cl100k_base
for gpt-4*, gpt-3.5*, text-embedding-3*/ada-002 (as OpenAI documents them). Message overhead:
3 tokens per message, +1 for `name`, +3 for the reply primer (openai-cookbook, "How to count
tokens with tiktoken"). Why an estimate and how it is calibrated: docs/text.md ("Tokens").
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import re
import threading
import unicodedata
from functools import lru_cache
from pathlib import Path
from typing import Any

TOKENS_PER_MESSAGE = 3  # OpenAI cookbook: <|start|>{role}\n{content}<|end|>\n
TOKENS_PER_NAME = 1  # OpenAI cookbook: a "name" field costs one more token
REPLY_PRIMER = 3  # OpenAI cookbook: every reply is primed with <|start|>assistant<|message|>
TOKENS_PER_TOOL_CALL = 3  # per call in an assistant message (id/type framing), upper bound
TOOLS_OVERHEAD = 12  # framing around the serialized tool schemas (cookbook's func_end = 12)
IMAGE_PART_TOKENS = 765  # a high-detail 512x512 tile: 85 base + 170 per tile x 4 (OpenAI docs)

CALIBRATION_MIN = 0.5
CALIBRATION_MAX = 2.0
CALIBRATION_ALPHA = 0.3  # weight of the newest observation in the EMA

# --- estimate: tokens per character, per character class ------------------------------
# Least-squares fit against exact cl100k_base counts (bpe-openai) of three samples, each
# kind weighted equally: English prose (benchmarks/data/en.txt, 2,948 chars, 590 tokens),
# Chinese prose (benchmarks/data/zh.txt, 977 chars, 1,011 tokens) and Python code (four
# stdlib modules + ctxagent's own source, ~790k chars), in 300/100/600-char chunks.
# Fitted: alnum 0.223, punct 0.609, space 0.084, CJK 1.049 tokens per character. The
# constants below round those up, so the estimate errs towards overcounting, the safe
# side of a budget: `python benchmarks/token_accuracy.py` measures +11.0% on the English
# sample, +4.9% on the Chinese one and +10.0% on the stdlib code (docs/benchmarks.md).
# DeepSeek/Qwen tokenizers spend fewer tokens on Chinese (DeepSeek documents ~0.6 per
# character, ~0.3 per English character);
# `TokenCounter.observe` corrects for that from the server's reported usage.
PER_ALNUM = 0.24  # ASCII letters and digits: ~4 characters a token in English words
PER_PUNCT = 0.62  # ASCII punctuation: operators and brackets often stand alone in code
PER_SPACE = 0.09  # ASCII whitespace: mostly merged into the next word or an indentation run
PER_CJK = 1.1  # CJK ideographs, kana, hangul, CJK punctuation: cl100k spends ~1.05 on each
PER_OTHER = 1.0  # other non-ASCII (accents, Cyrillic, symbols, emoji): 2-4 UTF-8 bytes each

_CJK_RE = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef\u3000-\u303f]")
_ALNUM = bytes(range(48, 58)) + bytes(range(65, 91)) + bytes(range(97, 123))
_SPACE = b" \t\r\n\x0b\x0c"

_O200K_PREFIXES = ("gpt-4o", "chatgpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "o1", "o3", "o4", "gpt-oss")
_CL100K_PREFIXES = ("gpt-4", "gpt-3.5", "gpt-35", "text-embedding-3", "text-embedding-ada-002")


def char_classes(text: str) -> tuple[int, int, int, int, int]:
    """Counts of (ASCII alnum, ASCII punctuation, ASCII whitespace, CJK, other non-ASCII).

    Works on bytes with `bytes.translate`, so it runs at C speed on long texts.
    """
    ascii_bytes = text.encode("ascii", "ignore")
    n_ascii = len(ascii_bytes)
    alnum = n_ascii - len(ascii_bytes.translate(None, _ALNUM))
    space = n_ascii - len(ascii_bytes.translate(None, _SPACE))
    punct = n_ascii - alnum - space
    non_ascii = len(text) - n_ascii
    cjk = len(_CJK_RE.findall(text)) if non_ascii else 0
    return alnum, punct, space, cjk, non_ascii - cjk


@lru_cache(maxsize=65536)
def estimate_tokens(text: str) -> int:
    """Estimated tokens of `text` for a model whose tokenizer we do not have; 0 for "", else >= 1.

    Sum over character classes of count x PER_ALNUM/PER_PUNCT/PER_SPACE/PER_CJK/PER_OTHER,
    calibrated against cl100k (`benchmarks/token_accuracy.py`); 10,000 Chinese characters
    estimate to 11,000 tokens (case C04).
    """
    if not text:
        return 0
    return max(1, int(estimate_value(text) + 0.999))


def estimate_value(text: str) -> float:
    """The unrounded estimate of `text` (tokens): the sum over its characters of their
    class's tokens per character. Additive: the values of disjoint pieces of a text sum
    to at most the text's value, which makes the sum over a text's chunks a lower bound
    of `estimate_tokens` (used by `TokenCounter.floor`)."""
    alnum, punct, space, cjk, other = char_classes(text)
    return alnum * PER_ALNUM + punct * PER_PUNCT + space * PER_SPACE + cjk * PER_CJK + other * PER_OTHER


# One match per run of ASCII letters (apostrophes joined) and per three digits of a number.
_ASCII_PIECES_RE = re.compile(r"[A-Za-z']*[A-Za-z][A-Za-z']*|[0-9]{1,3}")


def piece_floor(text: str) -> int:
    """A lower bound (tokens) of the exact cl100k_base and o200k_base count of `text`.

    At least one token per run of letters plus ceil(digits / 3) per run of digits, from
    tiktoken's pre-tokenizer regex (why: docs/text.md, "Tokens"); `tests/text/test_tokens.py`
    checks the bound against both encodings on arbitrary Unicode text.
    """
    if text.isascii():
        if text.isalpha():  # the usual chunk: one word
            return 1
        base = text.rstrip("0123456789")
        if base.isalpha():  # a word then a number ("utf8", "parser123")
            return 1 + (len(text) - len(base) + 2) // 3
        return len(_ASCII_PIECES_RE.findall(text))
    words = numbers = digits = 0
    letter_in_run = False
    for ch in text:
        kind = "'" if ch == "'" else unicodedata.category(ch)[0]
        if kind == "N":
            digits += 1
        elif digits:
            numbers, digits = numbers + (digits + 2) // 3, 0
        if kind == "L":
            letter_in_run = True
        elif kind not in ("M", "'"):
            words, letter_in_run = words + letter_in_run, False
    return words + letter_in_run + numbers + (digits + 2) // 3


def encoding_for_model(model: str | None) -> str | None:
    """The exact encoding name ("o200k_base" or "cl100k_base") for `model`, or None.

    A provider prefix (`openai/gpt-4o`) is ignored. Unknown or non-OpenAI models give
    None (their tokenizers are not available offline; see the module docstring).
    """
    if not model:
        return None
    name = model.lower().rsplit("/", 1)[-1]
    if name in ("o200k_base", "cl100k_base"):
        return name
    if name.startswith(_O200K_PREFIXES):
        return "o200k_base"
    if name.startswith(_CL100K_PREFIXES):
        return "cl100k_base"
    return None


_ENCODERS: dict[str, Any] = {}
_ENCODER_LOCK = threading.Lock()


def _encoder(name: str) -> Any:
    """The Rust tokenizer of bpe-openai for `name`, loaded once per process."""
    with _ENCODER_LOCK:
        if name not in _ENCODERS:
            _ENCODERS[name] = _bindings().tokenizer_for_encoding(name)
        return _ENCODERS[name]


def _bindings() -> Any:
    """bpe-openai's Rust extension (`bpe_openai._bindings`), whose `count` builds no token list.

    Loaded straight from its file: importing the `bpe_openai` package first would run
    its `__init__`, which decodes every BPE table into Python dicts (1.4 s and 60 MB
    here, measured) that exact counting never uses. Falls back to the plain import.
    """
    try:
        spec = importlib.util.find_spec("bpe_openai")
        folder = Path(next(iter(spec.submodule_search_locations or [])))
        binary = next(folder.glob("_bindings*.so"), None) or next(folder.glob("_bindings*.pyd"))
        loader = importlib.machinery.ExtensionFileLoader("bpe_openai._bindings", str(binary))
        module = importlib.util.module_from_spec(importlib.util.spec_from_loader(loader.name, loader))
        loader.exec_module(module)
        return module
    except (ImportError, StopIteration, AttributeError, TypeError, OSError):
        from bpe_openai import _bindings

        return _bindings


@lru_cache(maxsize=65536)
def _exact_count(encoding: str, text: str) -> int:
    try:
        return int(_encoder(encoding).count(text))
    except UnicodeEncodeError:
        # Lone surrogates (bytes that were not UTF-8, read with surrogateescape) cannot
        # be encoded; they are counted as their escapes (`\udc80`), as a JSON request
        # carries them, which costs more tokens than a replacement character: the safe side.
        return int(_encoder(encoding).count(text.encode("utf-8", "backslashreplace").decode("utf-8")))


def exact_tokens(text: str, encoding: str = "cl100k_base") -> int:
    """Exact token count of `text` in `encoding` ("cl100k_base" or "o200k_base"), offline."""
    return _exact_count(encoding, text) if text else 0


class TokenCounter:
    """Counts tokens of texts and chat requests for one model.

    `TokenCounter("gpt-4o")` counts exactly (o200k_base); `TokenCounter("deepseek-chat")`
    or `TokenCounter()` estimates (`exact` is False) and applies the calibration factor
    learned by `observe`. All counts are tokens; results are cached per text.
    """

    def __init__(self, model: str | None = None) -> None:
        self.model = model
        self.encoding = encoding_for_model(model)
        self.exact = self.encoding is not None
        self.factor = 1.0

    def count(self, text: str | None) -> int:
        """Tokens in `text` (0 for None or "")."""
        if not text:
            return 0
        if self.encoding is not None:
            return _exact_count(self.encoding, text)
        raw = estimate_tokens(text)
        return raw if self.factor == 1.0 else max(1, round(raw * self.factor))

    def floor(self, pieces: int, value: float) -> int:
        """A lower bound of `count(text)` without counting: `pieces` is a lower bound of the
        exact count (`piece_floor`, summed over pieces of the text), `value` one of the
        unrounded estimate (`estimate_value`, summed likewise). The builder decides with
        it that a text cannot fit, and counts exactly only the texts that might."""
        if self.exact:
            return pieces
        base = int(value * (1 - 1e-9))  # below the rounded-up estimate, float error included
        return base if self.factor == 1.0 else int(base * self.factor)

    def count_message(self, msg: dict) -> int:
        """Tokens of one chat message including its 3-token framing (OpenAI cookbook rule).

        Counts every string field (role, content, name, reasoning_content, tool_call_id),
        list content parts (text; images at IMAGE_PART_TOKENS) and each tool call's
        name and raw arguments plus TOKENS_PER_TOOL_CALL.
        """
        total = TOKENS_PER_MESSAGE
        for key, value in msg.items():
            if key == "tool_calls":
                total += self._count_tool_calls(value or [])
            elif key == "content" and isinstance(value, list):
                total += self._count_parts(value)
            elif isinstance(value, str):
                total += self.count(value)
                if key == "name":
                    total += TOKENS_PER_NAME
        return total

    def count_messages(self, messages: list[dict], tools: list[dict] | None = None) -> int:
        """Tokens of a whole request: every message, the reply primer and the tool schemas."""
        total = REPLY_PRIMER + sum(self.count_message(m) for m in messages)
        return total + self.count_tools(tools)

    def count_tools(self, tools: list[dict] | None) -> int:
        """Tokens of the tool schemas: compact JSON plus TOOLS_OVERHEAD (0 when no tools)."""
        if not tools:
            return 0
        return TOOLS_OVERHEAD + self.count(json.dumps(tools, separators=(",", ":"), ensure_ascii=False))

    def observe(self, estimated: int, reported_prompt_tokens: int) -> float:
        """Learn from the server; returns the new factor (exact counters keep 1.0).

        `estimated`: `count_messages` of a request (tokens); `reported_prompt_tokens`: the
        server's `usage.prompt_tokens` for it. Moving average (weight CALIBRATION_ALPHA) of
        reported / raw estimate, clamped to [CALIBRATION_MIN, CALIBRATION_MAX].
        """
        if self.exact or estimated <= 0 or reported_prompt_tokens <= 0:
            return self.factor
        raw = estimated / self.factor
        target = reported_prompt_tokens / raw
        updated = (1 - CALIBRATION_ALPHA) * self.factor + CALIBRATION_ALPHA * target
        self.factor = min(CALIBRATION_MAX, max(CALIBRATION_MIN, updated))
        return self.factor

    def _count_tool_calls(self, calls: list[Any]) -> int:
        total = 0
        for call in calls:
            fn = call.get("function", {}) if isinstance(call, dict) else {}
            total += TOKENS_PER_TOOL_CALL + self.count(str(fn.get("name") or ""))
            total += self.count(str(fn.get("arguments") or ""))
            total += self.count(str(call.get("id") or "")) if isinstance(call, dict) else 0
        return total

    def _count_parts(self, parts: list[Any]) -> int:
        total = 0
        for part in parts:
            if isinstance(part, dict) and part.get("type") == "text":
                total += self.count(str(part.get("text") or ""))
            elif isinstance(part, dict) and part.get("type") in ("image_url", "input_image"):
                total += IMAGE_PART_TOKENS
            else:
                total += self.count(json.dumps(part, ensure_ascii=False, default=str))
        return total
