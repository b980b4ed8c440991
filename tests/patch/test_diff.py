"""unified_diff: the plain text the user approves (no colour codes)."""

from __future__ import annotations

from pathlib import Path

from ctxagent.patch import parse_patch, plan_patch, unified_diff
from tests.patch.conftest import envelope as P


def diff(ws: Path, body: str) -> str:
    return unified_diff(plan_patch(parse_patch(P(body)), ws))


def test_update_diff_with_git_headers(ws: Path) -> None:
    (ws / "a.txt").write_bytes(b"one\r\ntwo\r\n")
    text = diff(ws, "*** Update File: a.txt\n@@\n one\n-two\n+TWO\n")
    assert text == (
        "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n"
    )
    assert "\x1b" not in text and "\r" not in text


def test_add_delete_and_move(ws: Path) -> None:
    (ws / "old.txt").write_text("x\n")
    (ws / "m.txt").write_text("m\n")
    text = diff(ws, "*** Add File: new.txt\n+n\n*** Delete File: old.txt\n"
                    "*** Update File: m.txt\n*** Move to: sub/m2.txt\n@@\n-m\n+M\n")
    assert "new file mode 100644\n--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+n\n" in text
    assert "deleted file\n--- a/old.txt\n+++ /dev/null\n" in text
    assert "rename from m.txt\nrename to sub/m2.txt\n--- a/m.txt\n+++ b/sub/m2.txt\n" in text
    assert text.count("diff --git") == 3


def test_missing_final_newline_is_marked(ws: Path) -> None:
    (ws / "n.txt").write_bytes(b"hello\nworld")
    text = diff(ws, "*** Update File: n.txt\n@@\n world\n+tail\n")
    assert "-world\n\\ No newline at end of file\n+world\n+tail\n" in text


def test_binary_files_are_named_not_dumped(ws: Path) -> None:
    (ws / "b.bin").write_bytes(b"\x00\x01")
    assert "Binary files a/b.bin and /dev/null differ" in diff(ws, "*** Delete File: b.bin\n")
