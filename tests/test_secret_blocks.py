"""Private keys printed with line prefixes or suffixes are redacted (issue 17, S6): keys made
at test time by openssl, ssh-keygen and gpg, printed by the real `cat -n`, `grep -n`,
`git blame`, `git grep -n`, `cat -A` and `sed -n l` in a git repository, whole or streamed
in random pieces, never show a line of key material."""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from ctxagent.redaction import REDACTED, StreamRedactor, redact

PROGRAMS = {
    "cat -n": ["cat", "-n"], "grep -n": ["grep", "-n", ""], "git blame": ["git", "blame"],
    "git grep -n": ["git", "grep", "-n", ""], "cat -A": ["cat", "-A"], "sed -n l": ["sed", "-n", "l"],
    "cat -nA": ["cat", "-nA"], "grep -n -A40 BEGIN": ["grep", "-n", "-A40", "BEGIN"], "git blame -p": ["git", "blame", "-p"],
}
# (file name, command that writes it there, its BEGIN label)
KEYS = [
    ("rsa.pem", "openssl genrsa -traditional -out rsa.pem 2048", "RSA PRIVATE KEY"),
    ("pkcs8.pem", "openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out pkcs8.pem", "PRIVATE KEY"),
    ("id_ed25519", "ssh-keygen -q -t ed25519 -N '' -C t@example.com -f id_ed25519", "OPENSSH PRIVATE KEY"),
    ("id_rsa", "ssh-keygen -q -t rsa -b 2048 -N '' -f id_rsa", "OPENSSH PRIVATE KEY"),
    ("ec.pem", "openssl ecparam -name prime256v1 -genkey -noout -out ec.pem", "EC PRIVATE KEY"),
    ("dsa.pem", "openssl dsaparam -genkey -noout 1024 | openssl dsa -out dsa.pem", "DSA PRIVATE KEY"),
    ("enc.pem", "openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -aes256 -pass pass:pw -out enc.pem",
     "ENCRYPTED PRIVATE KEY"),
    ("legacy.pem", "openssl genrsa 2048 | openssl rsa -aes128 -passout pass:pw -traditional -out legacy.pem",
     "RSA PRIVATE KEY"),
    ("pgp.asc", "gpg --batch --pinentry-mode loopback --passphrase '' --quick-gen-key 'T <t@example.com>' ed25519 "
     "default never && gpg --batch --armor --export-secret-keys > pgp.asc", "PGP PRIVATE KEY BLOCK"),
]


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=Test", "-c", "user.email=t@example.com", *args], cwd=repo, check=True,
                   capture_output=True)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A git repository holding one key of each kind (generated for this test, thrown away)."""
    missing = [t for t in ("git", "openssl", "ssh-keygen") if shutil.which(t) is None]
    if missing:
        pytest.skip(f"needs {', '.join(missing)} to make and print real keys")
    root = tmp_path_factory.mktemp("keys")
    env = {**os.environ, "GNUPGHOME": str(tmp_path_factory.mktemp("gnupg"))}
    for _name, command, _label in KEYS:
        if command.startswith("gpg") and shutil.which("gpg") is None:
            continue  # the PGP cases skip, saying why (`_key`)
        subprocess.run(command, shell=True, cwd=root, env=env, check=True, capture_output=True)
    (root / "README").write_text("keys for a redaction test\n")
    _git(root, "init", "-q", ".")
    _git(root, "add", ".")
    _git(root, "commit", "-qm", "keys")
    return root


def _key(repo: Path, name: str) -> str:
    """The text of key file `name`; skips when the program that makes it is missing (gpg)."""
    if not (repo / name).exists():
        pytest.skip(f"{name}: gpg is not installed")
    return (repo / name).read_text()


def _material(key_text: str) -> list[str]:
    """The base64 lines of a key (armor headers, labels and blank lines left out)."""
    return [line for line in key_text.splitlines()
            if line and "-----" not in line and ": " not in line]


def _leaks(shown: str, key_text: str) -> list[str]:
    """Lines of key material (or 12-character pieces of them) that `shown` holds."""
    out = []
    for line in _material(key_text):
        pieces = [line] if len(line) < 12 else [line[i:i + 12] for i in range(0, len(line) - 11, 6)]
        out += [line for p in pieces if p in shown and line not in out]
    return out


@functools.cache
def _printed(repo: Path, program: str, name: str) -> str:
    """What the real `program` prints for the key file `name` (run once per pair)."""
    return subprocess.run([*PROGRAMS[program], name], cwd=repo, capture_output=True, text=True, check=True).stdout


@pytest.mark.parametrize("program", list(PROGRAMS))
@pytest.mark.parametrize("name,label", [(k[0], k[2]) for k in KEYS], ids=[k[0] for k in KEYS])
def test_s6_a_key_printed_by_a_line_prefixing_program_is_redacted(repo: Path, program: str, name: str,
                                                                 label: str) -> None:
    key_text = _key(repo, name)
    assert f"-----BEGIN {label}-----" in key_text
    printed = _printed(repo, program, name)
    assert _leaks(printed, key_text)  # the program does print the key
    shown = redact(printed)
    assert _leaks(shown, key_text) == []
    assert REDACTED in shown
    assert redact(shown) == shown


@pytest.mark.parametrize("program", ["cat -n", "git blame", "grep -n"])
def test_s6_the_line_prefixes_stay_readable(repo: Path, program: str) -> None:
    shown = redact(_printed(repo, program, "rsa.pem")).splitlines()
    assert all(line.endswith(REDACTED) for line in shown[1:-1])
    assert [line[:-len(REDACTED)] for line in shown[1:-1]] != [""] * (len(shown) - 2)  # the prefix is kept
    assert shown[-1].endswith("-----END RSA PRIVATE KEY-----")


@pytest.mark.parametrize("program", ["cat -n", "git blame", "sed -n l", "cat -A"])
def test_s6_a_block_cut_before_its_end_is_redacted_and_the_text_after_it_kept(repo: Path, program: str) -> None:
    printed = _printed(repo, program, "rsa.pem").splitlines(keepends=True)
    cut = "".join(printed[:12]) + printed[12][:30]  # truncated output: no END line, half a line last
    shown = redact(cut + "\n[... 1200 characters cut ...]\n\nsummary: the file is a key\nnext step done\n")
    assert _leaks(shown, (repo / "rsa.pem").read_text()) == []
    assert shown.endswith("\n[... 1200 characters cut ...]\n\nsummary: the file is a key\nnext step done\n")


def test_s6_a_key_in_a_json_record_of_a_tool_output_is_redacted_and_stays_json(repo: Path) -> None:
    for program in ("cat -n", "git blame", "sed -n l"):
        record = json.dumps({"role": "tool", "content": _printed(repo, program, "rsa.pem")})
        shown = redact(record)
        assert _leaks(shown, (repo / "rsa.pem").read_text()) == []
        assert "BEGIN RSA PRIVATE KEY" in json.loads(shown)["content"]


def test_s6_code_that_names_a_key_header_is_left_as_it_is() -> None:
    code = ('PEM_HEADER = "-----BEGIN RSA PRIVATE KEY-----"\n'
            "def is_key(text):\n"
            "    return text.startswith(PEM_HEADER)\n"
            "\n"
            "answer = compute_the_answer_for_everything\n"
            "    value = somethingVeryLongAndCamelCasedForTheTest\n"
            'END = "-----END RSA PRIVATE KEY-----"\n'
            '     3\t    if "-----BEGIN OPENSSH PRIVATE KEY-----" in line:\n'
            "     4\t        return parse_the_openssh_key_format\n")
    assert redact(code) == code


def _stream(text: str, cuts: list[int]) -> str:
    redactor = StreamRedactor()
    bounds = sorted({c % (len(text) + 1) for c in cuts} | {0, len(text)})
    return "".join(redactor.feed(text[a:b]) for a, b in zip(bounds, bounds[1:])) + redactor.flush()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(list(PROGRAMS)), st.sampled_from([k[0] for k in KEYS]),
       st.lists(st.integers(min_value=0), max_size=40), st.sampled_from(["", "before\n", "x = 1\n" * 3]),
       st.sampled_from(["", "after it\n", "\nok"]))
def test_s6_random_pieces_of_a_streamed_key_never_show_a_line_of_it(
        repo: Path, program: str, name: str, cuts: list[int], before: str, after: str) -> None:
    assume((repo / name).exists())  # pgp.asc is missing where gpg is
    key_text = _key(repo, name)
    printed = before + _printed(repo, program, name) + after
    shown = _stream(printed, cuts)
    assert _leaks(shown, key_text) == []
    assert shown == redact(printed)


@pytest.mark.parametrize("program", ["cat -n", "git blame -p", "sed -n l"])
def test_s6_a_key_streamed_one_character_at_a_time_is_redacted(repo: Path, program: str) -> None:
    printed = _printed(repo, program, "id_rsa")
    assert _stream(printed, list(range(len(printed)))) == redact(printed)


@pytest.mark.parametrize("command", ["tail -c 400", "tail -n 5", "paste -sd,", "paste -sd';'"])
@pytest.mark.parametrize("name", ["rsa.pem", "pkcs8.pem", "id_ed25519"])
def test_a_key_tail_without_its_begin_line_or_joined_on_one_line_is_redacted(repo: Path, command: str,
                                                                            name: str) -> None:
    printed = subprocess.run(f"{command} {name}", shell=True, cwd=repo, capture_output=True, text=True,
                             check=True).stdout
    key_text = (repo / name).read_text()
    assert _leaks(printed, key_text)
    for shown in (redact("output:\n" + printed + "done\n"), json.loads(redact(json.dumps({"c": printed})))["c"]):
        assert _leaks(shown, key_text) == [] and REDACTED in shown, shown
    assert redact("the file ends with\n-----END RSA PRIVATE KEY-----\n").startswith("the file ends with\n")


def test_a_long_base64_run_near_an_end_label_is_redacted_in_linear_time() -> None:
    import time
    body = ("A" * 64 + "\n") * 5000
    started = time.perf_counter()
    for text in (body + "x y\n-----END PRIVATE KEY-----\n", "-----END PRIVATE KEY-----\n" + body + "x y\n"):
        redact(text)
    assert time.perf_counter() - started < 2.0


@pytest.mark.parametrize("command", ["cut -c 3-", "cut -c 2-", "cut -c 5-"])
@pytest.mark.parametrize("name", ["rsa.pem", "pkcs8.pem", "id_ed25519"])
def test_a_key_whose_begin_line_lost_dashes_is_redacted(repo: Path, command: str, name: str) -> None:
    # trial: `cut -c 3-` printed ---BEGIN ... PRIVATE KEY----- and every key line after it
    printed = subprocess.run(f"{command} {name}", shell=True, cwd=repo, capture_output=True, text=True,
                             check=True).stdout
    key_text = (repo / name).read_text()
    assert _leaks(printed, key_text)
    assert _leaks(redact(printed), key_text) == []
    assert _leaks(_stream(printed, list(range(0, len(printed), 7))), key_text) == []
