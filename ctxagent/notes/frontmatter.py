"""Markdown with YAML front matter: the on-disk form of one note (textbook section 9.4.2).

Written with PyYAML's safe dumper, never a template, so odd titles are quoted (case S02)
and no line can pass for the closing `---`; read with the base loader, every scalar a
string. Layout: docs/notes-todo-plan.md.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from ctxagent.errors import StorageError

#: Characters that force double-quoted style: C0/C1 controls, DEL, Unicode line and
#: paragraph separators and the BOM (all of which YAML folds or strips otherwise).
_RISKY = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff]")

_SafeDumper = yaml.SafeDumper
_BaseLoader = getattr(yaml, "CBaseLoader", yaml.BaseLoader)


class _NoteDumper(_SafeDumper):  # type: ignore[misc, valid-type]
    """Safe dumper that double-quotes strings holding line breaks or control characters."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = '"' if _RISKY.search(value) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_NoteDumper.add_representer(str, _represent_str)

DELIMITER = "---"


def render(meta: dict[str, Any], body: str) -> str:
    """Return the Markdown text of a note: front matter from `meta`, a blank line, `body`.

    `meta` holds plain data (str, list of str); keys keep their order.
    """
    header = yaml.dump(
        meta, Dumper=_NoteDumper, allow_unicode=True, sort_keys=False, width=float("inf")
    )
    text = f"{DELIMITER}\n{header}{DELIMITER}\n\n{body}"
    return text if text.endswith("\n") else text + "\n"


def parse(text: str, *, source: str = "note") -> tuple[dict[str, Any], str]:
    """Split note text into (front matter dict, body).

    The body loses the one blank line after the closing delimiter and surrounding
    newlines. Raises StorageError (naming `source`) when the front matter is missing,
    unterminated, not valid YAML or not a mapping.
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.split("\n")
    if not lines or lines[0].rstrip("\r") != DELIMITER:
        raise StorageError(f"{source}: no YAML front matter (the file must start with a '---' line)")
    end = _closing_line(lines)
    if end is None:
        raise StorageError(f"{source}: the YAML front matter is not closed by a '---' line")
    try:
        meta = yaml.load("\n".join(lines[1:end]), Loader=_BaseLoader)
    except yaml.YAMLError as exc:
        raise StorageError(f"{source}: the YAML front matter does not parse ({_yaml_problem(exc)})") from None
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise StorageError(f"{source}: the YAML front matter must be a mapping of keys to values")
    body = "\n".join(lines[end + 1 :]).strip("\r\n")
    return meta, body


def _yaml_problem(exc: yaml.YAMLError) -> str:
    """PyYAML's error on one line: `<problem> at line L, column C` (L counted in the whole
    file, whose first line is the opening `---`), instead of its multi-line dump."""
    problem = " ".join(str(getattr(exc, "problem", None) or exc).split())
    mark = getattr(exc, "problem_mark", None)
    if mark is None:
        return problem
    return f"{problem} at line {mark.line + 2}, column {mark.column + 1}"


def _closing_line(lines: list[str]) -> int | None:
    for i in range(1, len(lines)):
        if lines[i].rstrip("\r") in (DELIMITER, "..."):
            return i
    return None
