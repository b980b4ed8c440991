"""Issue 15 item 19: nl, tr, diff, jq and xargs in the read-only terminal, with the same
per-flag rules as the other commands: allowed flags run, unknown ones are refused, paths
stay inside the workspace, and xargs runs a command only once the command its input
makes has passed the same checks as a typed one (for any input)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ctxagent.errors import CtxAgentError, ToolInputError
from ctxagent.shell import programs
from ctxagent.shell.commands.jq import check_jq_program
from ctxagent.shell.commands.xargs import MAX_COMMANDS, XargsPlan, batches, exit_status, split_input
from ctxagent.tools import TerminalTool
from tests.shell.helpers import make_workspace, marker_state, snapshot

HAS_JQ = shutil.which("jq", path=programs.SAFE_PATH) is not None


@pytest.fixture
def env(tmp_path: Path) -> tuple[TerminalTool, Path]:
    ws = make_workspace(tmp_path)
    (tmp_path / "secret.txt").write_text("OUTSIDE-SECRET\n")
    (ws / "link_out").symlink_to(tmp_path / "secret.txt")
    (ws / "b.txt").write_text("b 2\na 9\n")
    (ws / "data.json").write_text('{"name": "demo", "items": [1, 2, 3]}\n')
    (ws / "list.txt").write_text("a.txt\nb.txt\n")
    (ws / "d1").mkdir()
    (ws / "d2").mkdir()
    (ws / "d1" / "f").write_text("one\n")
    (ws / "d2" / "f").write_text("two\n")
    return TerminalTool(ws, timeout=20), ws


def _ok(tool: TerminalTool, command: str) -> str:
    result = tool.execute({"command": command})
    assert result.ok, f"{command!r}: {result.content}"
    return result.content


def _refused(tool: TerminalTool, ws: Path, command: str, word: str) -> str:
    before, markers = snapshot(ws), marker_state()
    result = tool.execute({"command": command})
    assert not result.ok, f"{command!r} ran: {result.content}"
    assert word in result.content, f"{command!r}: {result.content}"
    assert "OUTSIDE-SECRET" not in result.content
    assert snapshot(ws) == before and marker_state() == markers
    with pytest.raises(CtxAgentError):
        tool.run({"command": command})
    return result.content


ALLOWED = [
    ("nl a.txt", "     1\tb 2"), ("nl -ba -w3 -s: a.txt", "  1:b 2"), ("nl -v 10 -i 5 a.txt", "    15\ta 1"),
    ("cat a.txt | nl -n rz", "000001"), ("nl --body-numbering=a --number-width=2 a.txt", " 1\tb 2"),
    ("cat a.txt | tr a-z A-Z", "B 2\nA 1"), ("cat a.txt | tr -d 0-9", "b \na "), ("echo aaa | tr -s a", "a"),
    ("echo abc | tr -c a x", "axxx"), ("echo 'a b' | tr --delete ' '", "ab"),
    ("diff a.txt b.txt", "< a 1"), ("diff -u a.txt b.txt", "+a 9"), ("diff -q a.txt b.txt", "differ"),
    ("diff -r d1 d2", "< one"), ("diff --unified=1 d1/f d2/f", "-one"), ("diff -y -W 30 d1/f d2/f", "one"),
    ("diff a.txt a.txt", "(no output)"), ("diff --from-file=d1/f d2/f", "> two"),
    ("cat a.txt | diff - a.txt", "(no output)"), ("diff -i -w -B --strip-trailing-cr a.txt a.txt", "(no output)"),
]
REFUSED = [
    ("nl -x a.txt", "-x"), ("nl ../secret.txt", "outside"), ("nl link_out", "outside"),
    ("tr a b a.txt", "standard input"), ("tr -x a b", "-x"), ("tr --sysv a b", "--sysv"),
    ("diff a.txt /etc/passwd", "outside"), ("diff a.txt link_out", "outside"), ("diff -l a.txt b.txt", "pr"),
    ("diff --paginate a.txt b.txt", "pr"), ("diff --to-file=../secret.txt a.txt", "outside"),
    ("diff --from-file ../secret.txt a.txt", "outside"), ("diff -X /etc/passwd d1 d2", "outside"),
    ("diff -S f d1 d2", "-S"), ("diff --unif a.txt b.txt", "--unif"), ("diff -r .. d1", "outside"),
]


@pytest.mark.parametrize("command,expect", ALLOWED)
def test_nl_tr_diff_run_with_their_allowed_flags(env, command, expect):
    assert expect in _ok(env[0], command)


@pytest.mark.parametrize("command,word", REFUSED)
def test_nl_tr_diff_refuse_unknown_flags_and_outside_paths(env, command, word):
    _refused(*env, command, word)


def test_diff_never_follows_a_link_out_of_the_workspace(env):
    tool, ws = env
    (ws / "d1" / "leak").symlink_to(ws.parent / "secret.txt")
    (ws / "d2" / "leak").write_text("x\n")
    text = _ok(tool, "diff -r d1 d2")
    assert "OUTSIDE-SECRET" not in text and "symbolic link" in text
    # a link named as an operand that resolves inside is compared as the file it leads to
    (ws / "link_a").symlink_to(ws / "a.txt")
    assert _ok(tool, "diff link_a a.txt") == "(no output)"


@pytest.mark.skipif(not HAS_JQ, reason="jq is not installed")
@pytest.mark.parametrize("command,expect", [
    ("jq -r .name data.json", "demo"), ("jq -c .items data.json", "[1,2,3]"), ("jq '.items | length' data.json", "3"),
    ("cat data.json | jq -rc '.items[]'", "1\n2\n3"), ("jq -n --arg x hi '$x'", '"hi"'),
    ("jq -n --argjson x '{\"a\":1}' '$x.a'", "1"), ("jq -n --slurpfile d data.json '$d[0].name'", '"demo"'),
    ("jq -n --rawfile t a.txt '$t | length'", "26"), ("jq --indent 1 .items data.json", "[\n 1,"),
    ("jq -S -e .name data.json", '"demo"'), ("jq .name -- data.json", '"demo"'), ("jq -s length data.json data.json", "2"),
    ("jq '.include, .\"import\"' data.json", "null"), ("jq -n '\"import and include are words\"'", "import"),
])
def test_jq_runs_with_allowed_flags(env, command, expect):
    assert expect in _ok(env[0], command)


@pytest.mark.parametrize("command,word", [
    ("jq . /etc/passwd", "outside"), ("jq . link_out", "outside"), ("jq -f prog.jq data.json", "-f"),
    ("jq --from-file prog.jq", "--from-file"), ("jq -L /etc -n 1", "-L"), ("jq -rL/etc -n 1", "-L"),
    ("jq -n 'import \"x\" as $d; $d'", "import"), ("jq -n 'include \"x\"; 1'", "include"),
    ("jq -n '\"a\" | modulemeta'", "modulemeta"), ("jq -n '\"\\(\"x\" | modulemeta)\"'", "modulemeta"),
    ("jq --slurpfile d ../secret.txt -n 1", "outside"), ("jq --rawfile d link_out -n 1", "outside"),
    ("jq --args -n '$ARGS' x", "--args"), ("jq --jsonargs -n 1", "--jsonargs"), ("jq -- . data.json", "`--`"),
    ("jq --run-tests t.txt", "--run-tests"), ("jq --seq=1 .", "--seq=1"), ("jq -x .", "-x"),
])
def test_jq_refuses_what_reads_files_or_cannot_be_checked(env, command, word):
    _refused(*env, command, word)


def test_jq_program_check_ignores_strings_fields_and_comments():
    for program in ('.import', '.a.include', '"include"', '# import "x"\n.', '$__loc__', '.modulemeta?'):
        check_jq_program(program)
    for program in ('import "a" as a; .', ' include "a"; .', 'modulemeta', '"\\(modulemeta)"', '.a | mod::modulemeta'):
        with pytest.raises(CtxAgentError):
            check_jq_program(program)


def test_a_missing_jq_is_named_with_how_to_get_it(env, monkeypatch, tmp_path):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setattr(programs, "SAFE_PATH", str(empty))  # a machine without jq
    result = env[0].execute({"command": "jq .name data.json"})
    assert not result.ok and "jq is not installed on this machine" in result.content
    assert "apt-get install jq" in result.content


XARGS_ALLOWED = [
    ("cat list.txt | xargs wc -l", "7 total"), ("cat list.txt | xargs grep -n 'a '", "a.txt:2:a 1"),
    ("cat list.txt | xargs -n 1 head -1", "b 2\nb 2"), ("find . -name '*.txt' -newer README.md | xargs -r wc -c", ""),
    ("echo a.txt | xargs cat", "x&&y"), ("xargs -a list.txt cat", "a 9"), ("xargs --arg-file=list.txt wc -l", "total"),
    ("echo 'a.txt b.txt' | xargs -n 1 wc -l", "5 a.txt\n2 b.txt"), ("cat list.txt | xargs -L 1 nl", "     1\tb 2"),
    ("cat list.txt | xargs", "a.txt b.txt"),
    ("echo \"'a b' c\" | xargs -n 1 echo", "a b\nc"), ("cat list.txt | tr '\\n' '\\0' | xargs -0 wc -l", "total"),
    ("cat list.txt | xargs -d '\\n' wc -l", "total"), ("cat list.txt | xargs -t wc -l", "[stderr]\nwc -l a.txt b.txt"),
    ("cat list.txt | xargs grep -c b | sort -r", "b.txt:1"), ("echo src | xargs grep -rn TODO", "src/main.py:2"),
    ("echo d1/f d2/f | xargs diff", "< one"), ("echo data.json | xargs jq -r .name", "demo"),
]


@pytest.mark.parametrize("command,expect", XARGS_ALLOWED)
def test_xargs_feeds_an_allowed_command(env, command, expect):
    if "jq" in command and not HAS_JQ:
        pytest.skip("jq is not installed")
    assert expect in _ok(env[0], command)


@pytest.mark.parametrize("command,word", [
    ("echo /etc/passwd | xargs cat", "outside"), ("echo ../secret.txt | xargs head", "outside"),
    ("echo link_out | xargs grep -n x", "outside"), ("echo --pre=sh | xargs rg x", "--pre"),
    ("echo -exec id ';' | xargs find .", "-exec"), ("echo -i | xargs sed s/a/b/", "-i"),
    ("echo '1e id' | xargs -0 sed -n", "`e`"), ("echo 'BEGIN{system(\"id\")}' | xargs -0 awk", "system"),
    ("echo -o out.txt | xargs sort a.txt", "-o"), ("echo -c x | xargs git log", "-c"), ("echo log | xargs git", "name a subcommand"),
    ("echo 'import \"x\" as $d; $d' | xargs -0 jq -n", "import"), ("echo a.txt out.txt | xargs uniq", "output file"),
    ("echo a | xargs -I{} cat {}", "-I"), ("echo a | xargs -i cat", "-i"), ("echo a | xargs --replace cat", "--replace"),
    ("echo a | xargs -P 4 cat", "-P"), ("echo a | xargs -p cat", "-p"), ("echo a | xargs -o cat", "-o"),
    ("echo a | xargs --process-slot-var=X cat", "--process-slot-var"), ("echo a | xargs sh -c id", "'sh'"),
    ("echo a | xargs bash", "'bash'"), ("echo a | xargs cd", "'cd'"), ("echo a | xargs xargs cat", "'xargs'"),
    ("echo a | xargs /bin/cat", "bare name"), ("xargs -a /etc/passwd cat", "outside"),
    ("xargs -a link_out cat", "outside"), ("cat list.txt | xargs -a list.txt cat", "-a FILE"),
    ("echo a | xargs cat -A --show-all=x", "takes no value"), ("echo a | xargs -s 10 cat", "-s"),
    ("echo a.txt | xargs cat | xargs cat", "one xargs"), ("echo x | xargs find . -delete", "-delete"),
])
def test_xargs_refuses_what_a_typed_command_would_be_refused_for(env, command, word):
    _refused(*env, command, word)


def test_xargs_runs_nothing_when_any_batch_is_refused(env):
    tool, ws = env
    # the first batch (a.txt) is fine; the second reads outside: nothing runs, not even the first
    text = _refused(tool, ws, "echo a.txt /etc/passwd | xargs -n 1 cat", "outside")
    assert "x&&y" not in text and "none ran" in text


def test_xargs_items_are_never_globbed_or_split_again(env):
    tool, ws = env
    (ws / "*.txt").write_text("star\n")
    assert _ok(tool, "echo '*.txt' | xargs cat") == "star"
    assert "No such file" in _ok(tool, "echo 'a.txt b.txt' | xargs -d '\\n' cat")


def test_xargs_exit_status_follows_gnu(env):
    tool, _ = env
    assert "[exit status 123]" in _ok(tool, "echo a.txt missing.txt | xargs cat")
    assert "[exit status" not in _ok(tool, "echo a.txt | xargs cat")


def test_xargs_input_limits_are_clear(env):
    tool, ws = env
    (ws / "many.txt").write_text("a.txt\n" * (MAX_COMMANDS + 1))
    assert "more than 100" in _refused(tool, ws, "xargs -a many.txt -n 1 cat", "commands")
    (ws / "big.txt").write_text("a.txt " * 200_000)
    assert "over 1 MiB" in tool.execute({"command": "cat big.txt | xargs wc -l"}).content
    assert "unmatched single quote" in tool.execute({"command": "echo \"it's\" | xargs echo"}).content


def test_xargs_splitting_and_batching_follow_gnu():
    plan = XargsPlan()
    assert split_input(b"a 'b c'\n\"d\" e\\ f\n\n''\n", plan) == [["a", "b c"], ["d", "e f"], [""]]
    assert split_input(b"a \nb\n", plan) == [["a", "b"]]  # a trailing blank continues the line
    assert split_input(b"a\0b c\0", XargsPlan(delimiter="\0")) == [["a"], ["b c"]]
    with pytest.raises(ToolInputError):
        split_input(b"a\0b", plan)
    with pytest.raises(ToolInputError):
        split_input(b"\xff", plan)
    lines = [["a", "b"], ["c"], ["d", "e"]]
    assert batches(lines, XargsPlan(max_args=2), 10) == [["a", "b"], ["c", "d"], ["e"]]
    assert batches(lines, XargsPlan(max_lines=2), 10) == [["a", "b", "c"], ["d", "e"]]
    assert batches([], XargsPlan(), 10) == [[]] and batches([], XargsPlan(no_run_if_empty=True), 10) == []
    assert exit_status([0, 1, 0]) == 123 and exit_status([0, -9]) == 125 and exit_status([255]) == 124
