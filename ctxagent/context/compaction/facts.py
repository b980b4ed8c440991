"""Key-fact extraction for the extractive compaction summary (regex based, deterministic).

A fact is a short verbatim span (path, identifier, version tag, number with its label,
URL, command, error line); every fact is a substring of its source, so it survives
compaction as written (issue 4, case C03; `benchmarks/compaction_facts.py`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: Fact kinds, in the order they are listed in a summary.
KINDS = ("version", "path", "id", "number", "url", "command", "error")

_URL = re.compile(r"https?://[^\s<>\"'`)\]]+")
_VERSION = re.compile(r"(?<![\w.-])(?:v\d+(?:[.\-][A-Za-z0-9]+)*|\d+\.\d+\.\d+(?:[-+][A-Za-z0-9.]+)?)(?![\w-])")
_PATH = re.compile(
    r"(?<![\w@:/.-])(?:~/|\.{1,2}/|/)?(?:[\w.-]+/)+[\w.-]+/?"
    r"|(?<![\w/.-])[\w-]+(?:\.[\w-]+)*\.(?:py|pyi|md|rst|txt|json|jsonl|toml|yaml|yml|ini|cfg|lock|"
    r"js|jsx|ts|tsx|rs|go|c|h|cc|cpp|hpp|java|kt|rb|php|sh|sql|html|css|csv|xml|proto|env)\b"
)
_TICKET = re.compile(r"(?<![\w-])[A-Z][A-Z0-9]+-\d+(?![\w-])")
_SNAKE = re.compile(r"(?<![\w.])[A-Za-z_][A-Za-z0-9]*_[A-Za-z0-9_]+(?![\w])")
_CAMEL = re.compile(r"(?<![\w.])[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+(?![\w])|(?<![\w.])[a-z]+(?:[A-Z][a-z0-9]*)+(?![\w])")
_DOTTED = re.compile(r"(?<![\w.])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\(\)")
_HEX = re.compile(r"(?<![\w-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}(?![\w-])")
_NUMBER = re.compile(
    r"(?:(?<![\w-])[^\W\d][\w-]*[ \t]*[:=]?[ \t]*)?(?<![\w.])\d[\d,_]*(?:\.\d+)?"
    r"(?:[ \t]?(?:%|ms|s|sec|seconds|minutes|hours|days|KB|MB|GB|kB|tokens|lines|chars|bytes|px)\b)?"
    r"(?![\w])"
)
_BACKTICK = re.compile(r"`([^`\n]{2,200})`")
_DOLLAR = re.compile(r"^\s*\$ (.{2,200})$", re.MULTILINE)
_ERROR_LINE = re.compile(
    r"^.*\b(?:[A-Z]\w*(?:Error|Exception)|Traceback\b|FAILED|FAIL|fatal|panic|error(?:\[\w+\])?:).*$",
    re.MULTILINE,
)
#: Source code that names an error without reporting one (`except TypeError:`, `from types
#: import TracebackType`, `raise ValueError(...)`): a file's text, not an error that happened.
_CODE_LINE = re.compile(
    r"^\s*(?:except|raise|class|def|from|import|if|elif|return|assert|with|catch|throw|throws|new|@|#|//|/?\*)\b"
    r"|^\s*(?:\w+\s*=|@|#|//|/?\*)"
)
#: Words that label a number but say nothing on their own ("the 3 files" is not a fact).
_WEAK_LABELS = {"the", "a", "an", "of", "to", "in", "and", "or", "is", "are", "was", "with", "for", "on", "at", "by", "than"}
_MAX_FACT_CHARS = 200


@dataclass(frozen=True)
class Fact:
    """One extracted fact: `kind` (one of KINDS), `text` (verbatim span), `source` role."""

    kind: str
    text: str
    source: str = "user"

    def render(self) -> str:
        """The summary line for this fact, e.g. `[path] src/a.py (stated by user)`."""
        suffix = " (stated by user)" if self.source == "user" else ""
        return f"[{self.kind}] {self.text}{suffix}"


def _spans(pattern: re.Pattern[str], text: str) -> list[str]:
    return [m.group(0).strip() for m in pattern.finditer(text)]


def _numbers(text: str) -> list[str]:
    out = []
    for span in _spans(_NUMBER, text):
        label, _, rest = span.partition(" ")
        if rest and label.lower() in _WEAK_LABELS:
            span = rest.strip()
        if re.fullmatch(r"\d{1,2}", span):
            continue  # a bare small number ("3 files") carries no fact by itself
        out.append(span)
    return out


def _identifiers(text: str) -> list[str]:
    found = _spans(_TICKET, text) + _spans(_DOTTED, text) + _spans(_HEX, text)
    found += [s for s in _spans(_SNAKE, text) if not s.startswith("__") or s.endswith("__")]
    found += _spans(_CAMEL, text)
    return found


def _commands(text: str) -> list[str]:
    return [m.group(1).strip() for m in _BACKTICK.finditer(text)] + [m.group(1).strip() for m in _DOLLAR.finditer(text)]


def _errors(text: str, limit: int) -> list[str]:
    lines = [line.strip() for line in _spans(_ERROR_LINE, text) if line.strip() and not _CODE_LINE.match(line)]
    return lines[:limit]


def extract_facts(text: str, *, source: str = "user", error_limit: int = 5) -> list[Fact]:
    """Every key fact in `text`, in kind order then appearance, deduplicated, spans cut at 200
    characters. `source`: "user", "assistant" or "tool" (tool output yields only error lines,
    at most `error_limit`: its paths can be found again by re-running the tool)."""
    if not text:
        return []
    by_kind: dict[str, list[str]] = {kind: [] for kind in KINDS}
    if source != "tool":
        by_kind["url"] = _spans(_URL, text)
        no_urls = _URL.sub(" ", text)
        by_kind["version"] = _spans(_VERSION, no_urls)
        by_kind["path"] = [p for p in _spans(_PATH, no_urls) if not _VERSION.fullmatch(p)]
        by_kind["id"] = [i for i in _identifiers(no_urls) if not any(i in p for p in by_kind["path"])]
        by_kind["number"] = _numbers(_VERSION.sub(" ", no_urls))
        by_kind["command"] = _commands(text)
    by_kind["error"] = _errors(text, error_limit)
    return dedupe_facts(Fact(kind, span[:_MAX_FACT_CHARS], source) for kind in KINDS for span in by_kind[kind])


def dedupe_facts(facts) -> list[Fact]:
    """Facts in first-seen order with duplicates (same text) removed; a span already
    inside a longer kept fact of another kind (a path inside a command) is kept too,
    because it may be what a later step searches for."""
    seen: set[str] = set()
    out: list[Fact] = []
    for fact in facts:
        key = fact.text.strip() if fact.kind == "error" else fact.text.strip().rstrip(".,;:")
        if not key or key in seen:
            continue
        seen.add(key)
        out.append(Fact(fact.kind, key, fact.source))
    return out


def command_of_call(name: str, arguments: dict) -> str | None:
    """The command line of a terminal-like tool call (its `command`/`cmd` argument), else None."""
    for key in ("command", "cmd"):
        value = arguments.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()[:_MAX_FACT_CHARS]
        if isinstance(value, list) and value:
            return " ".join(str(v) for v in value)[:_MAX_FACT_CHARS]
    return None
