"""The command-line parser: quote removal like a POSIX shell, `|` the only operator."""

from __future__ import annotations

import shlex

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxagent.errors import ToolRefusedError
from ctxagent.shell.parse import Word, parse_pipeline


def texts(line: str) -> list[list[str]]:
    return [[w.text for w in stage] for stage in parse_pipeline(line)]


@pytest.mark.parametrize("line,expected", [
    ("ls -la", [["ls", "-la"]]),
    ("  ls   -la  ", [["ls", "-la"]]),
    ("grep -n 'a b' \"c d\" e\\ f", [["grep", "-n", "a b", "c d", "e f"]]),
    ("echo '' \"\"", [["echo", "", ""]]),
    ("echo a'b'\"c\"d", [["echo", "abcd"]]),
    ("echo \"a\\\"b\" \"\\\\\" \"\\x\"", [["echo", 'a"b', "\\", "\\x"]]),
    ("echo 'it''s'", [["echo", "its"]]),
    ("cat a|sort|uniq -c", [["cat", "a"], ["sort"], ["uniq", "-c"]]),
    ("echo '|' \"|\" \\|", [["echo", "|", "|", "|"]]),
    ("echo 'a\nb'", [["echo", "a\nb"]]),
    ("grep x \\\nREADME", [["grep", "x", "README"]]),
    ("git log HEAD~3 @{1}", [["git", "log", "HEAD~3", "@{1}"]]),
    ("find . ! -name x", [["find", ".", "!", "-name", "x"]]),
    ("echo a#b", [["echo", "a#b"]]),
    ("echo '$HOME' \"\\$HOME\" \\$HOME", [["echo", "$HOME", "$HOME", "$HOME"]]),
    ("echo {} {a} a,b", [["echo", "{}", "{a}", "a,b"]]),
])
def test_quote_removal_and_pipes(line, expected):
    assert texts(line) == expected


def test_unquoted_glob_characters_are_remembered():
    words = parse_pipeline("ls *.py 'x*' src/[ab]? \"*\"y")[0]
    assert words[1] == Word("*.py", "*.py")
    assert words[2] == Word("x*")
    assert words[3].glob == "src/[ab]?"
    assert words[4] == Word("*y")


def test_quoted_parts_of_a_glob_are_escaped():
    word = parse_pipeline("ls 'a*'*")[0][1]
    assert word.text == "a**" and word.glob == "a[*]*"


@pytest.mark.parametrize("line,word", [
    ("ls 'unterminated", "single quote"), ('ls "unterminated', "double quote"),
    ("ls \\", "trailing backslash"), ("ls\x00x", "NUL"), ("ls\x1bx", "control character"),
    ("ls ||", "`||`"), ("echo \"a$(id)\"", "$(...)"), ("echo \"${x}\"", "${...}"),
    ("echo $1", "`$1`"), ("echo $?", "`$?`"), ("echo $$", "`$$`"), ("ls =~", "`~`"),
    ("ls a:~/x", "`~`"), ("echo x;", "`;`"), ("echo )", "`)`"),
])
def test_shell_syntax_is_refused(line, word):
    with pytest.raises(ToolRefusedError) as err:
        parse_pipeline(line)
    assert word in str(err.value) and "not allowed" in str(err.value)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",))),
                min_size=1, max_size=6))
def test_single_quoted_words_come_back_unchanged(words):
    line = " ".join(shlex.quote(w) for w in words)
    assert texts(line) == [words]


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="ab -'\"\\|$;&<>()#~*{},.\n\r\t`"))
def test_any_line_parses_or_is_refused_cleanly(line):
    try:
        stages = parse_pipeline(line)
    except ToolRefusedError as exc:
        assert "not allowed" in str(exc)
        return
    assert all(stage for stage in stages)
    if "\\" not in line:  # without backslashes, shlex (POSIX mode) splits the same way
        expected = [shlex.split(part) for part in _split_unquoted_pipes(line)]
        assert [[w.text for w in stage] for stage in stages] == expected


def _split_unquoted_pipes(line: str) -> list[str]:
    parts, current, quote = [], "", ""
    for ch in line:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "|":
            parts.append(current)
            current = ""
            continue
        current += ch
    return parts + [current]


# issue 17 S12 / S13: bounded command length and stages; a linear brace check

import time as _time

from ctxagent.errors import ToolRefusedError as _Refused
from ctxagent.shell.parse import MAX_COMMAND_CHARS, MAX_STAGES


@pytest.mark.parametrize("line", [
    "cat a | " * 6000 + "cat a",                  # the 36 KB, 6,001-stage line
    " | ".join(["cat a"] * (MAX_STAGES + 1)),       # one stage too many, short line
    "echo " + "x" * MAX_COMMAND_CHARS,              # one long word
    "echo '" + "|" * MAX_COMMAND_CHARS + "'",         # quoted pipes only
])
def test_s12_long_or_deep_pipelines_are_refused(line):
    with pytest.raises(_Refused, match="limit is"):
        parse_pipeline(line)


def test_s12_pipes_inside_quotes_do_not_count_as_stages():
    stages = parse_pipeline("echo '" + "|" * 40 + "' | cat")
    assert len(stages) == 2


def test_s12_the_cap_itself_is_accepted():
    assert len(parse_pipeline(" | ".join(["cat a"] * MAX_STAGES))) == MAX_STAGES


@pytest.mark.parametrize("word", ["{" * 4000 + "}" * 4000, "{a" + "}" * 8000, "{" + "x}" * 4000 + ",}",
                                  "a{" * 4000])
def test_s13_brace_check_is_linear(word):
    start = _time.process_time()
    try:
        parse_pipeline("echo " + word[: MAX_COMMAND_CHARS - 5])
    except _Refused:
        pass
    assert _time.process_time() - start < 0.5


@pytest.mark.parametrize("word", ["{a,b}", "{1..3}", "x{a}y,}", "{a'b'..c}", "{..}", "{{a,b}"])
def test_s13_brace_expansion_still_refused(word):
    with pytest.raises(_Refused, match="brace expansion"):
        parse_pipeline("echo " + word)


@pytest.mark.parametrize("word", ["{}", "{a}", "'{a,b}'", "{a'.'.b}", "a,b{c}", "..{a}", "{a.b}", "{a", "a,b}",
                                  "{..{a}"])
def test_s13_braces_that_do_not_expand_pass(word):
    parse_pipeline("echo " + word)
