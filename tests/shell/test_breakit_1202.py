"""Break test of 2026-12-02 (`breakit`): one test per hole found, named after it.

Each runs the terminal as the model would (`TerminalTool.execute`), on a workspace with a
marker file outside it and ctxagent's state folder inside; docs/terminal.md, "Break test
of 2026-12-02", tells what each hole was and how the class was closed.
"""

from __future__ import annotations

import os
import shutil
import time
import unicodedata
from pathlib import Path

import pytest

from ctxagent.errors import ToolRefusedError
from ctxagent.shell.commands.awk import check_awk_program
from ctxagent.shell.output import escape_controls
from ctxagent.shell.programs import find_rg
from ctxagent.storage.files import STATE_DIR_NAME
from ctxagent.tools import TerminalTool

STATE = "STATE-IN-SESSION"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("print('x')\n")
    (root / STATE_DIR_NAME / "sessions").mkdir(parents=True)
    (root / STATE_DIR_NAME / "sessions" / "s.json").write_text(STATE + "\n")
    (tmp_path / "outside.txt").write_text("SECRET-MARKER\n")
    return root


def _run(ws: Path, command: str, sandbox: bool | None = False) -> tuple[bool, str]:
    result = TerminalTool(ws, sandbox=sandbox, timeout=20).execute({"command": command})
    return result.ok, result.content


@pytest.mark.skipif(find_rg() is None, reason="rg is not installed")
@pytest.mark.parametrize("command", ["rg -g '*' {}", "rg --iglob '*' {}", "rg --hidden -g '*' {}",
                                     "rg --hidden --iglob '.*' {}", "rg -g '!x' --iglob '**' {}",
                                     "rg {} --glob=* -- .", "rg -g '*' {} src .", "rg -e -- -g '*' -e {} -- ."])
def test_rg_glob_that_matches_state_folder_does_not_unhide_it(ws: Path, command: str) -> None:
    """`rg -g '*' X`: rg's later (and every --iglob) glob won over the `--glob=!.ctxagent`
    put first, so the state showed without being named."""
    ok, out = _run(ws, command.format(STATE))
    assert STATE not in out, out


@pytest.mark.skipif(find_rg() is None, reason="rg is not installed")
def test_rg_glob_naming_state_folder_still_shows_it(ws: Path) -> None:
    """A glob that spells `.ctxagent` names it: hiding is off, as for a path operand."""
    ok, out = _run(ws, f"rg --hidden -g '.ctxagent/**' {STATE}")
    assert ok and STATE in out, out
    ok, out = _run(ws, "rg -g '*.py' print")
    assert ok and "src/a.py" in out and STATE not in out, out
    assert "was left out" not in out  # `*.py` would not have taken the folder in
    ok, out = _run(ws, "rg -g '*' print")
    assert ok and "src/a.py" in out and "was left out" in out, out


@pytest.mark.parametrize("program", [
    'BEGIN { SYMTAB["AR" "GV"][1] = "/etc/passwd" } { print }',
    'BEGIN { for (k in SYMTAB["ENV" "IRON"]) print k }',
    'BEGIN { f = FUNCTAB["x"] }',
    'BEGIN { bindtextdomain("/tmp"); print dcgettext("x") }',
])
def test_gawk_symtab_reaches_argv_and_environ(program: str) -> None:
    """gawk's SYMTAB gives ARGV, ENVIRON and PROCINFO under names the word list did not
    hold (`SYMTAB["AR" "GV"][1] = FILE` read a file outside the workspace)."""
    with pytest.raises(ToolRefusedError, match="not allowed"):
        check_awk_program(program)


@pytest.mark.skipif(shutil.which("awk") is None, reason="awk is not installed")
def test_gawk_symtab_refused_through_the_tool(ws: Path) -> None:
    """The same through the tool: nothing runs, whichever awk the machine has."""
    ok, out = _run(ws, """awk 'BEGIN { SYMTAB["AR" "GV"][1] = "../outside.txt" } { print }' src/a.py""")
    assert not ok and "SECRET" not in out and "SYMTAB" in out, out


@pytest.mark.parametrize("command", ["cd '-\x1b]0;pwned\x07'", "git log '--\x1b[2J'", "ls '--\x9b2J'",
                                     "grep -e x --colour='\x1b]52;c;eA==\x07' src"])
def test_refusal_message_passes_control_characters_through(ws: Path, command: str) -> None:
    """A refusal quoted the model's word raw (`cd -ESC]0;...BEL` retitled the terminal of a
    user reading the result); every message of the tool is escaped like output."""
    ok, out = _run(ws, command)
    assert not any(ch in out for ch in "\x1b\x07\x9b"), repr(out)


_INVISIBLE = "\U000e0049\U000e0067\U000e006e\U000e006f\U000e0072\U000e0065"  # tag letters: "Ignore"


def test_invisible_unicode_hides_text_from_the_user(ws: Path) -> None:
    """Tag characters (U+E0020-E007F, "ASCII smuggling"), zero-width spaces, word joiners,
    LRM/RLM and the BOM render as nothing in a terminal while the model reads them: a file
    could hold instructions the user does not see. They are now escaped like controls."""
    (ws / "README.md").write_text(f"hello{_INVISIBLE}\u200b\u2060\u200e\ufeff\U000e0100 world\n")
    ok, out = _run(ws, "cat README.md")
    assert ok and "hello\\U000e0049" in out and "\\u200b\\u2060\\u200e\\ufeff\\U000e0100 world" in out, out


def test_every_format_character_is_escaped_but_joiners() -> None:
    """All of Unicode's format characters (Cf) but ZWNJ/ZWJ (needed by Persian, Indic
    scripts and emoji), and the variation selectors past VS16, are shown as escapes."""
    kept = {0x200C, 0x200D}
    for code in range(0x110000):
        ch = chr(code)
        if code in kept or not (unicodedata.category(ch) == "Cf" or 0xE0100 <= code <= 0xE01EF):
            continue
        assert escape_controls(ch) != ch, f"U+{code:04X}"
    assert escape_controls("caf\u00e9 \u200d \u2764\ufe0f \u4e2d") == "caf\u00e9 \u200d \u2764\ufe0f \u4e2d"


@pytest.mark.skipif(shutil.which("jq") is None, reason="jq is not installed")
@pytest.mark.parametrize("command", ["jq . fifo", "jq -n --rawfile x fifo '$x'", "jq -n --slurpfile x fifo '$x'",
                                     "jq . a.json -- fifo", "xargs -a names.txt jq ."])
def test_jq_reads_a_fifo_until_the_timeout(ws: Path, command: str) -> None:
    """jq's own option parser skipped the FIFO check every other command's files get, so
    `jq . fifo` waited for a writer until the timeout; now refused at once, naming it."""
    os.mkfifo(ws / "fifo")
    (ws / "a.json").write_text("{}\n")
    (ws / "names.txt").write_text("fifo\n")
    started = time.monotonic()
    ok, out = _run(ws, command)
    assert not ok and "named pipe (FIFO)" in out and time.monotonic() - started < 5, out


@pytest.mark.parametrize("command", ["grep -r -D read x .", "grep -rDread x .", "grep -r --devices=read x .",
                                     "grep -d recurse --devices read x"])
def test_grep_devices_read_opens_fifos_found_while_recursing(ws: Path, command: str) -> None:
    """`grep -r -D read` opened a FIFO met while recursing (grep skips them by default),
    waiting until the timeout; `-D read` with recursion is refused, `-D skip` runs."""
    os.mkfifo(ws / "src" / "fifo")
    started = time.monotonic()
    ok, out = _run(ws, command)
    assert not ok and "-D" in out and time.monotonic() - started < 5, out
    ok, out = _run(ws, "grep -r -D skip print src")
    assert ok and "a.py" in out, out


def test_glob_through_looping_links_runs_exponentially_in_ctxagent(ws: Path) -> None:
    """A hostile repository's two links `l1 -> .`, `l2 -> .` made `ls */*/.../*` expand to
    3^N paths inside ctxagent itself (no timeout applies there): N=14 took 3 s, N=20 would
    take hours and all memory. Expansion now stops after a fixed number of entries."""
    for name in ("l1", "l2"):
        (ws / name).symlink_to(".")
    for depth in (20, 40):
        started = time.monotonic()
        ok, out = _run(ws, "ls " + "/".join(["*"] * depth) + " " + "/".join(["*"] * depth) + "/nothing")
        assert not ok and "pattern" in out and time.monotonic() - started < 5, out
    ok, out = _run(ws, "ls */*.py l1/src/*.py")
    assert ok and "src/a.py" in out and "l1/src/a.py" in out, out


def test_glob_expansion_matches_the_shell() -> None:
    """The bounded expansion gives what glob.glob gives on an ordinary tree."""
    import glob as stdlib_glob
    import tempfile

    from ctxagent.shell.globbing import bounded_glob

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for rel in ("a.py", ".h.py", "src/b.py", "src/.c.py", "src/d/e.py", "x y/[z].txt", "-f.txt"):
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text("")
        (root / "link").symlink_to("src")
        for pattern in ("*", ".*", "*.py", "*/*.py", "*/.*", "src/*", "*/", "src/*/", "*/d/e.py", "[a-z]*",
                        "x y/[[]z].txt", "**/*.py", "s?c/*", "*/nothing", "-*", str(root / "src") + "/*",
                        "src//*", "link/*"):
            expected = sorted(stdlib_glob.glob(pattern, root_dir=root))
            assert sorted(bounded_glob(pattern, str(root))) == expected, pattern


def test_current_directory_swapped_for_a_link_runs_commands_outside(ws: Path, tmp_path: Path) -> None:
    """After `cd sub`, another process replacing `sub` by a link to a directory outside made
    every later command (`ls`, `grep -r x` without operands) run there, with no path to
    check. The directory is checked again before each command."""
    (ws / "sub").mkdir()
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "id_rsa").write_text("PRIVATE\n")
    tool = TerminalTool(ws, sandbox=False)
    assert tool.execute({"command": "cd sub"}).ok
    (ws / "sub").rmdir()
    (ws / "sub").symlink_to(tmp_path / "secret")
    result = tool.execute({"command": "ls"})
    assert not result.ok and "changed since `cd`" in result.content and "id_rsa" not in result.content
    assert tool.current_dir == ws.resolve()
    for command in ("ls", "grep -r PRIVATE", "cat id_rsa"):  # now at the workspace root
        result = tool.execute({"command": command})
        assert "PRIVATE" not in result.content and "id_rsa\n" not in result.content + "\n", result.content


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_git_index_of_any_size_is_copied_before_each_git_command(ws: Path) -> None:
    """The repository view copies `.git/index` before each git run, in ctxagent, with no
    size limit or timeout: an archive's 50 GB (sparse) index filled /tmp on every call.
    An index bigger than the scratch limit is now refused before anything is copied."""
    import subprocess

    from ctxagent.shell.limits import ResourceLimits

    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    with open(ws / ".git" / "index", "wb") as index:
        index.truncate(3 << 20)
    tool = TerminalTool(ws, sandbox=False, limits=ResourceLimits(scratch_bytes=1 << 20))
    result = tool.execute({"command": "git status"})
    assert not result.ok and "index" in result.content and "MiB" in result.content, result.content
    assert TerminalTool(ws, sandbox=False).execute({"command": "git log"}).ok  # fits the default 256 MiB


@pytest.mark.skipif(shutil.which("awk") is None, reason="awk is not installed")
def test_gawk_runs_sandboxed_as_a_second_lock(ws: Path) -> None:
    """Where awk is gawk, it gets `--sandbox` (no system(), redirection or new ARGV files),
    as GNU sed does; mawk, which has no such option, runs as before."""
    import subprocess

    from ctxagent.shell.parse import parse_pipeline
    from ctxagent.shell.paths import PathContext
    from ctxagent.shell.policy import check_pipeline

    root = str(ws.resolve())
    argv = check_pipeline(parse_pipeline("awk '{ print }' src/a.py"), PathContext(root=root, cwd=root))[0]
    probe = subprocess.run([shutil.which("awk"), "--sandbox", "BEGIN { }"], capture_output=True)
    assert (argv[1] == "--sandbox") == (probe.returncode == 0), argv
    assert _run(ws, "awk '{ print }' src/a.py") == (True, "print('x')")


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_git_config_of_any_size_is_listed_into_memory(ws: Path) -> None:
    """The config filter read `git config --list` of the repository's config whole into
    ctxagent's memory (an archive's 1 GB config: 1 GB, each call); over 4 MiB is refused."""
    import subprocess

    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    with open(ws / ".git" / "config", "a") as config:
        config.write("[x]\n" + "\tkey = value-value-value\n" * 200_000)  # 5 MiB
    result = TerminalTool(ws, sandbox=False).execute({"command": "git status"})
    assert not result.ok and "config" in result.content and "MiB" in result.content, result.content
