"""Cases T01-T08 of the terminal cases (docs/terminal.md), each with the neighbours the same fault
would break. Every rejected command must be refused before anything runs, name the
refused word, and leave the workspace and /tmp unchanged; every allowed one must run."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxagent.errors import CtxAgentError
from ctxagent.shell.output import truncate_output
from ctxagent.shell.programs import find_rg
from ctxagent.tools import TerminalTool
from tests.shell.helpers import make_workspace, marker_state, snapshot

# (command, a word the refusal must name)
T01_REJECTED = [
    ("find . -name '*.py' -exec rm {} \\;", "-exec"),
    ("find . -execdir sh -c 'id' \\;", "-execdir"),
    ("find . -delete", "-delete"),
    ("find . -fprint out.txt", "-fprint"),
    ("find . -okdir cat {} \\;", "-okdir"),
    ("find . -ok rm {} \\;", "-ok"),
    ("find . -fprint0 out.txt", "-fprint0"),
    ("find . -fprintf out.txt %p", "-fprintf"),
    ("find . -fls out.txt", "-fls"),
    ("find . --exec rm {} \\;", "--exec"),
    ("find -L . -name x", "-L"),
    ("find . -follow", "-follow"),
    ("find . -name x -o -exec id \\;", "-exec"),
    ("find . '(' -name x -exec id \\; ')'", "-exec"),
]
T01_ALLOWED = [
    ("find . -name '*.py' -type f", "./src/main.py"),
    ("find src -maxdepth 2 -print", "src/main.py"),
    ("find . -newer a.txt", ""),
    ("find . '(' -name '*.md' -o -name '*.py' ')' -print", "./README.md"),
    ("find . ! -name '*.txt' -type f", "./src/main.py"),
    ("find", "./a.txt"),
]

T02_REJECTED = [
    ("sed -n '1e id' README.md", "`e`"),
    ("sed 's/.*/id/e' README.md", "`e` flag"),
    ("sed -n 'w /tmp/copy' README.md", "`w`"),
    ("sed -i.bak 's/a/b/' README.md", "-i"),
    ("sed --in-place 's/a/b/' README.md", "--in-place"),
    ("sed -e '1e id' README.md", "`e`"),
    ("sed -n -e p -e 'w /tmp/copy' README.md", "`w`"),
    ("sed 's/a/b/w /tmp/copy' README.md", "`w` flag"),
    ("sed 's/a/b/gw /tmp/copy' README.md", "`w` flag"),
    ("sed '1r /etc/passwd' README.md", "`r`"),
    ("sed 'R /etc/passwd' README.md", "`R`"),
    ("sed 'W /tmp/copy' README.md", "`W`"),
    ("sed -f script.sed README.md", "-f"),
    ("sed -n '/x/{p;w /tmp/copy\n}' README.md", "`w`"),
    ("sed -n ':a;w /tmp/copy' README.md", "`w`"),
    ("sed -n '1!e id' README.md", "`e`"),
    ("sed -n '$!{$!e id\n}' README.md", "`e`"),
    ("sed 'k' README.md", "'k'"),
    ("sed 's/[/]/g;#/e' README.md", "inside [...]"),
    ("sed --expression='1e id' README.md", "`e`"),
    ("awk 'BEGIN{system(\"id\")}'", "system"),
    ("awk '{print > \"out.txt\"}' README.md", "`>`"),
    ("awk 'BEGIN{print \"x\" | \"sh\"}'", "`|`"),
    ("awk '{print >> \"out.txt\"}' README.md", "`>>`"),
    ("awk '{printf \"%s\", $0 > \"/tmp/copy\"}' README.md", "`>`"),
    ("awk '{print($1) > \"out.txt\"}' README.md", "`>`"),
    ("awk '{print $1,\n$2 > \"out.txt\"}' README.md", "`>`"),
    ("awk 'BEGIN{\"id\" | getline x; print x}'", "getline"),
    ("awk 'BEGIN{while ((getline l < \"/etc/passwd\") > 0) print l}'", "getline"),
    ("awk 'BEGIN{print ENVIRON[\"HOME\"]}'", "ENVIRON"),
    ("awk 'BEGIN{ARGV[1]=\"/etc/passwd\"; ARGC=2} {print}'", "ARGV"),
    ("awk 'BEGIN{close(\"x\")}'", "close"),
    ("awk 'BEGIN{x=4; y=x/2; print y > 1 ? \"big\" : \"small\"}'", "`>`"),
    ("awk '@load \"filefuncs\"; BEGIN{}'", "@"),
    ("awk 'BEGIN{print |& \"sh\"}'", "`|`"),
    ("awk -f prog.awk README.md", "-f"),
    ("awk -W exec prog.awk", "-W"),
    ("awk '{print}' ARGC=3 README.md", "ARGC"),
    ("awk 'BEGIN { x = 1 } `id`'", "backquote"),
    ("awk '/[/]/ { print > \"out\" }' a.txt", "`/` inside"),
    ("awk 'BEGIN { if (1) /\"/ ; print | \"sh\" ; x = \"/ }'", "`|`"),
]
T02_ALLOWED = [
    ("sed -n '1,20p' README.md", "hello foo"),
    ("sed 's/foo/bar/g' README.md", "hello bar"),
    ("awk '{print $1}' README.md", "hello"),
    ("sed -n -E '/hel+o/p;2q' README.md", "hello foo"),
    ("sed -n '/^#/!p' README.md", "hello foo"),
    ("sed '1d;$d' README.md", "hello foo"),
    ("sed -e 's|o|0|2' -e 'y/abc/ABC/' README.md", "hello f0o"),
    ("sed -n '2{p;q}' README.md", "hello foo"),
    ("awk -F' ' 'NR==2 && $1 ~ /hel+o/ {print NR\": \"$2}' README.md", "2: foo"),
    ("awk 'BEGIN{x=4; y=x/2; print y, (y > 1 ? \"big\" : \"small\")}'", "2 big"),
    ("awk '$2 > 1 {print $1}' a.txt", "b"),
    ("awk '{ if (NF > 1) print ($2 > 1) }' a.txt", "1"),
    ("awk -v n=2 'NR == n' a.txt", "a 1"),
    ("awk '{n++} END {print n}' a.txt", "5"),
]

T03_REJECTED = [
    ("sort -o out.txt a.txt", "-o"),
    ("sort -oout.txt a.txt", "-o"),
    ("sort --out=out.txt a.txt", "--out"),
    ("sort --output out.txt a.txt", "--output"),
    ("sort -S 1b --compress-program=sh a.txt", "--compress-program"),
    ("sort -T /tmp a.txt", "-T"),
    ("sort -ruo out.txt a.txt", "-o"),
    ("sort a.txt -o out.txt", "-o"),
    ("rg --pre=sh TODO .", "--pre"),
    ("rg --pre sh TODO .", "--pre"),
    ("rg --pre-glob '*' TODO .", "--pre-glob"),
    ("rg -z TODO .", "-z"),
    ("rg --search-zip TODO .", "--search-zip"),
    ("rg -L TODO .", "-L"),
    ("uniq a.txt b.txt", "output file"),
    ("uniq -c a.txt out.txt", "output file"),
    ("grep -R TODO .", "-R"),
    ("file -z a.txt", "-z"),
    ("file -C -m x", "-C"),
    ("du -L .", "-L"),
    ("ls --dereference", "--dereference"),
    ("tail --pid=1 a.txt", "--pid"),
    ("wc --files0-from=a.txt", "--files0-from"),
    ("grep --regex=foo a.txt", "--regex"),
    ("cat --show-all=yes a.txt", "takes no value"),
]
T03_ALLOWED = [
    ("sort a.txt", "a 1"),
    ("sort -r -u -k2 a.txt", "b 2"),
    ("uniq -c a.txt", "1 b 2"),
    ("cat a.txt | sort | uniq -c", "2 b 2"),
    ("grep -n -e foo -m 1 README.md", "2:hello foo"),
    ("grep -rn TODO --include='*.py'", "src/main.py:2"),
    ("grep -c2 TODO README.md", "1"),
    ("head -n2 a.txt", "a 1"),
    ("head -2 a.txt", "a 1"),
    ("cut -d' ' -f1 a.txt", "b"),
    ("wc -l a.txt", "5 a.txt"),
    ("ls -la --color=never src", "main.py"),
    ("stat -c %s a.txt", "26"),
    ("du -sh src", "src"),
    ("echo hello -n world", "hello -n world"),
    ("sort -t ' ' -k 2n a.txt --", "a 1"),
]
if find_rg():
    T03_ALLOWED.append(("rg -n TODO src", "2:"))
    T03_ALLOWED.append(("rg --files src", "src/main.py"))

T04_REJECTED = [
    ("cat README.md\nrm -rf x", "newline"),
    ("ls\r\ntouch x", "carriage return"),
    ("cat a.txt & touch x", "`&`"),
    ("ls; touch x", "`;`"),
    ("ls && touch x", "`&&`"),
    ("ls || touch x", "`||`"),
    ("grep -n foo a.txt |\ntouch x", "newline"),
    ("cat a.txt &", "`&`"),
    ("ls |& cat", "`|&`"),
    ("ls >out.txt", "redirection"),
    ("ls > out.txt", "redirection"),
    ("ls >> out.txt", "redirection"),
    ("ls 2>out.txt", "redirection"),
    ("ls 2>&1", "redirection"),
    ("cat < a.txt", "redirection"),
    ("(ls)", "`(`"),
    ("ls | ", "empty command"),
    ("| ls", "empty command"),
    ("ls # ; touch x", "`#`"),
    ("touch x", "'touch'"),
    ("/bin/ls", "bare name"),
    ("FOO=1 ls", "'FOO=1'"),
]
T04_ALLOWED = [
    ("grep -n \"a;b\" a.txt", "5:a;b here"),
    ("grep -n 'x&&y' a.txt", "4:x&&y"),
    ("grep -n 'a|b' a.txt", None),
    ("echo 'ls; rm -rf x' \"a && b\" 'c > d'", "ls; rm -rf x a && b c > d"),
    ("grep -n hello \\\nREADME.md", "2:hello foo"),
]

T05_REJECTED = [
    ("cat${IFS}/etc/passwd", "${...}"),
    ("ls $(touch pwned)", "$(...)"),
    ("cat `id`", "backquote"),
    ("grep \"$(id)\" README.md", "$(...)"),
    ("cat <(id)", "process substitution"),
    ("wc -l $(find . -name '*.py')", "$(...)"),
    ("cat ~/.ssh/id_rsa", "`~`"),
    ("cat \"$HOME\"/../x", "$HOME"),
    ("head ${HOME}/.bashrc", "${...}"),
    ("ls ~root", "`~`"),
    ("echo $'\\x41'", "$'...'"),
    ("echo $\"x\"", '$"..."'),
    ("ls $HOME", "$HOME"),
    ("echo \"`id`\"", "backquote"),
    ("ls --color=~/x", "`~`"),
    ("cat {a,README}.txt", "brace expansion"),
    ("cat a{1..3}", "brace expansion"),
    ("ls $", "`$`"),
    ("cat >(id)", "process substitution"),
]
T05_ALLOWED = [
    ("grep '$(id)' README.md", "$(id) and"),
    ("grep '$IFS' README.md", "$IFS stay"),
    ("grep -F '`x`' README.md", None),
    ("echo \\$HOME '~' \"\\$x\"", "$HOME ~ $x"),
    ("cat *.txt", "x&&y"),
    ("ls src/*.py", "src/main.py"),
    ("echo '*.txt'", "*.txt"),
]

T06_REJECTED = [
    ("cat ../../etc/passwd", "../../etc/passwd"),
    ("cat /etc/passwd", "/etc/passwd"),
    ("grep -r key ..", "'..'"),
    ("find / -name id_rsa", "'/'"),
    ("cd ../..", "../.."),
    ("ls /", "'/'"),
    ("cat link_out", "link_out"),
    ("grep -f /etc/passwd a.txt", "/etc/passwd"),
    ("find . -newer /etc/passwd", "/etc/passwd"),
    ("cat ../*", "outside"),
    ("head -n 3 src/../../ws2/x", "outside"),
    ("cd /", "'/'"),
    ("cd link_out_dir", "link_out_dir"),
]
T06_ALLOWED = [
    ("cat ./src/../README.md", "hello foo"),
    ("cat link_in", "b 2"),
]


def _tool(tmp_path: Path, **kw) -> tuple[TerminalTool, Path]:
    ws = make_workspace(tmp_path)
    (ws / "link_out").symlink_to("/etc/passwd")
    (ws / "link_out_dir").symlink_to("/etc")
    (ws / "link_in").symlink_to(ws / "a.txt")
    return TerminalTool(workspace=ws, **{"timeout": 10, **kw}), ws


def _assert_refused(tool: TerminalTool, ws: Path, command: str, word: str) -> None:
    before, markers = snapshot(ws), marker_state()
    cwd = tool.current_dir
    result = tool.execute({"command": command})
    assert not result.ok, f"{command!r} was not refused: {result.content}"
    assert word in result.content, f"refusal of {command!r} does not name {word!r}: {result.content}"
    assert "not allowed" in result.content
    assert snapshot(ws) == before
    assert marker_state() == markers
    assert tool.current_dir == cwd
    with pytest.raises(CtxAgentError):
        tool.run({"command": command})


def _assert_allowed(tool: TerminalTool, command: str, expect: str | None) -> None:
    result = tool.execute({"command": command})
    assert result.ok, f"{command!r} was refused: {result.content}"
    if expect:
        assert expect in result.content, f"{command!r} gave {result.content!r}"


@pytest.mark.parametrize("command,word", T01_REJECTED)
def test_T01_find_predicates_that_run_programs_are_refused(tmp_path, command, word):
    tool, ws = _tool(tmp_path)
    _assert_refused(tool, ws, command, word)


@pytest.mark.parametrize("command,expect", T01_ALLOWED)
def test_T01_read_only_find_runs(tmp_path, command, expect):
    _assert_allowed(_tool(tmp_path)[0], command, expect)


@pytest.mark.parametrize("command,word", T02_REJECTED)
def test_T02_sed_and_awk_scripts_that_run_or_write_are_refused(tmp_path, command, word):
    tool, ws = _tool(tmp_path)
    _assert_refused(tool, ws, command, word)


@pytest.mark.parametrize("command,expect", T02_ALLOWED)
def test_T02_printing_sed_and_awk_run(tmp_path, command, expect):
    _assert_allowed(_tool(tmp_path)[0], command, expect)


@pytest.mark.parametrize("command,word", T03_REJECTED)
def test_T03_flags_that_write_or_run_are_refused(tmp_path, command, word):
    tool, ws = _tool(tmp_path)
    _assert_refused(tool, ws, command, word)


@pytest.mark.parametrize("command,expect", T03_ALLOWED)
def test_T03_allowed_flags_run(tmp_path, command, expect):
    _assert_allowed(_tool(tmp_path)[0], command, expect)


def test_T03_refusal_lists_what_is_allowed(tmp_path):
    tool, _ = _tool(tmp_path)
    content = tool.execute({"command": "sort --out=x a.txt"}).content
    assert "--output" not in content.split("allowed flags:")[1]
    assert "--reverse" in content and "spell the flag out" not in content
    content = tool.execute({"command": "grep --max=3 x a.txt"}).content
    assert "spell the flag out in full (--max-count)" in content


@pytest.mark.parametrize("command,word", T04_REJECTED)
def test_T04_separators_other_than_the_pipe_are_refused(tmp_path, command, word):
    tool, ws = _tool(tmp_path)
    _assert_refused(tool, ws, command, word)


@pytest.mark.parametrize("command,expect", T04_ALLOWED)
def test_T04_quoted_operators_are_plain_text(tmp_path, command, expect):
    _assert_allowed(_tool(tmp_path)[0], command, expect)


@pytest.mark.parametrize("command,word", T05_REJECTED)
def test_T05_expansion_and_substitution_are_refused(tmp_path, command, word):
    tool, ws = _tool(tmp_path)
    _assert_refused(tool, ws, command, word)


@pytest.mark.parametrize("command,expect", T05_ALLOWED)
def test_T05_single_quoted_text_is_literal(tmp_path, command, expect):
    _assert_allowed(_tool(tmp_path)[0], command, expect)


@pytest.mark.parametrize("command,word", T06_REJECTED)
def test_T06_paths_outside_the_workspace_are_refused(tmp_path, command, word):
    tool, ws = _tool(tmp_path)
    (tmp_path / "ws2").mkdir()
    _assert_refused(tool, ws, command, word)


@pytest.mark.parametrize("command,expect", T06_ALLOWED)
def test_T06_paths_that_resolve_inside_run(tmp_path, command, expect):
    _assert_allowed(_tool(tmp_path)[0], command, expect)


def test_T06_cd_keeps_a_directory_inside_the_workspace(tmp_path):
    tool, ws = _tool(tmp_path)
    assert tool.run({"command": "cd src"}).startswith("Changed directory")
    assert tool.run({"command": "cat main.py"}).startswith("def main")
    assert tool.run({"command": "pwd"}) == str(ws.resolve() / "src")
    assert "hello foo" in tool.run({"command": f"cat {ws.resolve()}/README.md"})
    assert not tool.execute({"command": "cat ../../etc/passwd"}).ok
    assert not tool.execute({"command": "cd ../.."}).ok
    assert tool.current_dir == ws.resolve() / "src"
    tool.run({"command": "cd .."})
    assert tool.current_dir == ws.resolve()
    tool.run({"command": "cd src"})
    tool.run({"command": "cd"})
    assert tool.current_dir == ws.resolve()
    assert not tool.execute({"command": "cd src | cat"}).ok
    assert not tool.execute({"command": "cd a.txt"}).ok


def test_T07_truncation_cuts_at_a_character_boundary():
    data = ("a" * 4999 + "─" + "b" * 10).encode()
    text = truncate_output(data, 5000)
    assert len(text.encode("utf-8")) <= 5000
    assert "\ufffd" not in text
    dropped = int(text.split("[... ")[1].split(" bytes")[0])
    kept = text.replace(text[text.index("\n[... ") : text.index("...]\n") + 5], "")
    assert len(kept.encode()) + dropped == len(data)
    assert text.startswith("a") and text.endswith("b" * 10)


@pytest.mark.parametrize("limit", [1, 5, 50, 150, 1000, 4999, 5001, 5012, 6000])
def test_T07_truncation_never_splits_a_character_at_any_limit(limit):
    data = ("─" * 3000 + "é" * 7 + "x").encode()
    text = truncate_output(data, limit)
    assert "\ufffd" not in text
    if len(data) <= limit:
        assert text == data.decode()
    else:
        assert "bytes of output dropped" in text


def test_T07_invalid_bytes_become_replacement_characters():
    assert truncate_output(b"\xff\xfe\x00", 100) == "\ufffd\ufffd\x00"
    assert "\ufffd" in truncate_output(b"\xff" * 10000, 100)


def test_T07_through_a_real_command(tmp_path):
    tool, ws = _tool(tmp_path, max_output_size=5000)
    (ws / "big.txt").write_bytes(("a" * 4999 + "─" + "b" * 10).encode())
    (ws / "bad.bin").write_bytes(b"\xff\xfe\x00")
    text = tool.run({"command": "cat big.txt"})
    assert len(text.encode()) <= 5000 and "\ufffd" not in text
    assert "bytes of output dropped" in text
    # replacement characters, and the NUL escaped (breaker finding F4: no raw control bytes)
    assert tool.run({"command": "cat bad.bin"}) == "\ufffd\ufffd\\x00"


def test_T08_runaway_command_is_killed_and_the_session_goes_on(tmp_path):
    tool, ws = _tool(tmp_path, timeout=1)
    result = tool.execute({"command": "tail -f a.txt"})
    assert not result.ok and "timed out after 1 s" in result.content
    assert "b 2" in result.content  # what it printed before the timeout
    result = tool.execute({"command": "tail -f a.txt | grep b"})
    assert not result.ok and "timed out" in result.content
    assert tool.run({"command": "head -1 a.txt"}) == "b 2"
