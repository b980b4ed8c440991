"""Issue 17 S14: a symbolic link swapped between the path check and the program's open.
`cat`, `head` and `tail` read what was checked: ctxagent opens each file component by
component without following links and hands the program `/dev/fd/N`; a link that
appears in between makes the command refused, never an outside read."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from ctxagent.errors import ToolRefusedError
from ctxagent.shell.paths import PathContext
from ctxagent.shell.pinned import MAX_PINNED, open_checked, pin_reads
from ctxagent.tools import TerminalTool
from tests.shell.helpers import make_workspace

OUTSIDE = "S14-OUTSIDE-CONTENT"


def _swapper(link: Path, targets: list[Path], stop: threading.Event) -> None:
    i = 0
    while not stop.is_set():
        tmp = link.with_name(f".swap{i % 2}")
        tmp.unlink(missing_ok=True)
        tmp.symlink_to(targets[i % 2])
        os.replace(tmp, link)
        i += 1
        time.sleep(0.0005 * (i % 7))  # uneven pauses: some checks see a steady link, some a swap


@pytest.mark.parametrize("command", ["cat x", "head -c 100 x", "tail -n 5 x", "cat a.txt x a.txt"])
def test_s14_a_link_swapped_during_the_check_never_reads_outside(tmp_path, command):
    ws = make_workspace(tmp_path)
    (tmp_path / "outside.txt").write_text(OUTSIDE + "\n")
    (ws / "x").symlink_to(ws / "a.txt")
    stop = threading.Event()
    thread = threading.Thread(target=_swapper, args=(ws / "x", [tmp_path / "outside.txt", ws / "a.txt"], stop))
    thread.start()
    tool = TerminalTool(workspace=ws, timeout=10, sandbox=False)
    outcomes = {"read": 0, "refused": 0}
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not (outcomes["read"] >= 5 and outcomes["refused"] >= 5):
            result = tool.execute({"command": command})
            assert OUTSIDE not in result.content, result.content
            outcomes["read" if result.ok else "refused"] += 1
    finally:
        stop.set()
        thread.join()
    assert outcomes["read"] and outcomes["refused"], outcomes  # both sides of the race were hit


def test_s14_reads_are_handed_over_as_descriptors(tmp_path):
    ws = make_workspace(tmp_path)
    ctx = PathContext(root=str(ws), cwd=str(ws))
    argv, fds = pin_reads(["cat", "-n", "a.txt", "-", "src/main.py", "src", "missing"], ctx)
    try:
        assert argv[:2] == ["cat", "-n"] and argv[3] == "-" and argv[5:] == ["src", "missing"]
        assert argv[2] == f"/dev/fd/{fds[0]}" and argv[4] == f"/dev/fd/{fds[1]}"
    finally:
        for fd in fds:
            os.close(fd)
    for argv in (["head", "-v", "a.txt"], ["head", "a.txt", "README.md"], ["wc", "a.txt"], ["tail", "--verbose", "a.txt"]):
        assert pin_reads(argv, ctx) == (argv, [])  # the name shows in the output: left as is


def test_s14_a_link_on_the_way_is_refused_by_the_opener(tmp_path):
    """open_checked resolves then opens without following: a link inside the workspace
    is resolved first (fine), a FIFO is left to the program, outside is refused."""
    ws = make_workspace(tmp_path)
    (ws / "inlink").symlink_to("src")
    os.mkfifo(ws / "pipe")
    (tmp_path / "out.txt").write_text(OUTSIDE)
    (ws / "outlink").symlink_to(tmp_path / "out.txt")
    ctx = PathContext(root=str(ws), cwd=str(ws))
    fd = open_checked(ctx, "inlink/main.py")
    assert fd is not None and os.read(fd, 3) == b"def"
    os.close(fd)
    assert open_checked(ctx, "pipe") is None
    with pytest.raises(ToolRefusedError, match="not allowed"):
        open_checked(ctx, "outlink")


@pytest.mark.parametrize("sandbox", [False, None])
def test_s14_output_is_unchanged(tmp_path, sandbox):
    ws = make_workspace(tmp_path)
    tool = TerminalTool(workspace=ws, timeout=10, sandbox=sandbox)
    assert tool.run({"command": "cat -n a.txt"}).startswith("     1\tb 2")
    assert tool.run({"command": "head -n 1 README.md"}) == "# Demo"
    assert tool.run({"command": "tail -n 1 src/main.py"}) == "print('hi')".join(["    ", ""])
    assert "cat: src: Is a directory" in tool.execute({"command": "cat src"}).content
    assert "Not a directory" in tool.execute({"command": "cat a.txt/"}).content


def test_s14_many_operands_pin_at_most_a_bounded_number(tmp_path):
    ws = make_workspace(tmp_path)
    ctx = PathContext(root=str(ws), cwd=str(ws))
    argv, fds = pin_reads(["cat", *["a.txt"] * (MAX_PINNED + 10)], ctx)
    try:
        assert len(fds) == MAX_PINNED and argv[-1] == "a.txt" and argv[1].startswith("/dev/fd/")
    finally:
        for fd in fds:
            os.close(fd)
