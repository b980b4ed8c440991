"""Property: a patch generated from (old, new) applies to old and gives new exactly.

Files are random lists of distinct lines (so every hunk's context is unique), in LF or
CRLF, with or without a final newline. The patch is built from difflib's grouped
opcodes (3 lines of context), one `@@` hunk per group, exactly as a model should write
it. The format cannot express "no newline at end of file", so the expected result
follows the documented rule: the missing final newline is kept when the old last line
is still last, otherwise the file ends with a newline (case P02); a file without any
line break (empty, or one line without newline) has no style to keep and gets LF.
"""

from __future__ import annotations

import difflib
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ctxagent.patch import apply_patch_text

_chars = st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n\x00")
_line = st.text(_chars, max_size=10)


def make_patch(path: str, old: list[str], new: list[str]) -> str:
    """An `*** Update File` patch turning `old` into `new` (lists of line contents)."""
    out = ["*** Begin Patch", f"*** Update File: {path}"]
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for group in matcher.get_grouped_opcodes(3):
        out.append("@@")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out += [" " + s for s in old[i1:i2]]
                continue
            out += ["-" + s for s in old[i1:i2]]
            out += ["+" + s for s in new[j1:j2]]
    out.append("*** End Patch")
    return "\n".join(out) + "\n"


def encode(lines: list[str], nl: str, final: bool) -> bytes:
    return (nl.join(lines) + (nl if lines and final else "")).encode()


@st.composite
def edits(draw):
    pool = draw(st.lists(_line, unique=True, min_size=1, max_size=30))
    split = draw(st.integers(0, len(pool)))
    old, fresh = pool[:split], pool[split:]
    new = [s for s in old if draw(st.booleans()) or not fresh]  # drop some old lines...
    for s in fresh:  # ...and insert new ones anywhere
        new.insert(draw(st.integers(0, len(new))), s)
    final = draw(st.booleans())
    if old and old[-1] == "":
        final = True  # "x\n" without final newline is the same bytes as "x" with one
    return old, new, final, draw(st.sampled_from(["\n", "\r\n"])), draw(st.booleans())


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=edits())
@example(case=([""], ["0", ""], True, "\n", False))  # a trailing " " context line
def test_generated_patch_round_trips(case) -> None:
    old, new, final, nl, crlf_transport = case
    if old == new:
        return
    new_final = final if (old and new and old[-1] == new[-1]) else True
    if len(old) < 2 and not (old and final):
        nl = "\n"  # the old file has no line break to take the style from: LF
    patch = make_patch("f.txt", old, new)
    if crlf_transport:
        patch = patch.replace("\n", "\r\n")
    ws = Path(tempfile.mkdtemp(prefix="ctxagent-rt-"))
    try:
        (ws / "f.txt").write_bytes(encode(old, nl, final))
        apply_patch_text(patch, ws, backup=False, max_changed_lines=10_000)
        assert (ws / "f.txt").read_bytes() == encode(new, nl, new_final)
    finally:
        shutil.rmtree(ws)
