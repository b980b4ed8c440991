"""Allow-lists of flags for the read-only git subcommands (git 2.39 option syntax).

Optional values only attached (OPTIONAL), `--format=` and friends ATTACHED, `-NUM`
digits alone; `git grep -f` is PATH. What is left out on purpose, and why:
docs/terminal.md ("Module notes").
"""

from __future__ import annotations

from ctxagent.shell.specs import ATTACHED, NONE, OPTIONAL, PATH, VALUE, Spec

_DIFF_NONE = (
    "patch no-patch raw patch-with-raw patch-with-stat numstat shortstat summary name-only "
    "name-status compact-summary full-index binary no-color minimal patience histogram "
    "ignore-space-at-eol ignore-space-change ignore-all-space ignore-blank-lines ignore-cr-at-eol "
    "text exit-code quiet check no-renames function-context no-prefix find-copies-harder "
    "pickaxe-all pickaxe-regex irreversible-delete cumulative no-ext-diff no-textconv"
)
_DIFF_VALUE = (
    "diff-filter diff-algorithm src-prefix dst-prefix line-prefix inter-hunk-context "
    "word-diff-regex anchored ws-error-highlight"
)
_DIFF_OPTIONAL = (
    "stat dirstat color word-diff abbrev find-renames find-copies break-rewrites relative "
    "unified color-moved color-words"
)
_LOG_NONE = (
    "oneline all branches tags remotes reverse first-parent merges no-merges no-decorate graph "
    "abbrev-commit no-abbrev-commit full-history simplify-merges topo-order date-order "
    "author-date-order left-right cherry-pick cherry-mark cherry boundary follow parents children "
    "source relative-date all-match invert-grep regexp-ignore-case basic-regexp extended-regexp "
    "fixed-strings perl-regexp log-size no-notes use-mailmap no-mailmap count "
    "simplify-by-decoration dense sparse remove-empty full-diff no-walk"
)
_LOG_VALUE = (
    "max-count skip since after until before author committer grep date "
    "decorate-refs decorate-refs-exclude encoding"
)
_LOG_ATTACHED = "format min-parents max-parents"
_WHY = {
    "--output": "it writes a file", "--ext-diff": "it runs an external diff program",
    "--textconv": "it runs text conversion programs", "--show-signature": "it runs gpg",
    "--no-index": "it compares files outside the repository",
    "--recurse-submodules": "submodule configurations are not hardened",
    "--ignore-submodules": "ctxagent sets it (submodule configurations are not hardened)",
    "-O": "it runs a program", "--open-files-in-pager": "it runs a program",
    "--contents": "it reads a file that is not an operand", "--ignore-revs-file": "it reads another file",
    "-c": "combined diffs are not supported here; use -p",
}


def _spec(short: dict[str, str], none: str = "", value: str = "", optional: str = "",
          path: str = "", attached: str = "", **kw: object) -> Spec:
    long: dict[str, str] = {}
    for names, kind in ((none, NONE), (value, VALUE), (optional, OPTIONAL), (path, PATH), (attached, ATTACHED)):
        long.update({f"--{n}": kind for n in names.split()})
    return Spec(short=short, long=long, why=_WHY, **kw)  # type: ignore[arg-type]


def _short(none: str = "", value: str = "", optional: str = "", path: str = "") -> dict[str, str]:
    out = {c: NONE for c in none}
    out.update({c: VALUE for c in value})
    out.update({c: OPTIONAL for c in optional})
    out.update({c: PATH for c in path})
    return out


_DIFF_SHORT = dict(none="puszRabwWD", value="SG", optional="MCBU")
_LOG_SHORT = dict(none="puszRabwWDiEFPg", value="SGn", optional="MCBU")

SUBCOMMANDS: dict[str, Spec] = {
    "status": _spec(
        _short(none="sbz", optional="u"),
        none="short branch long show-stash ahead-behind no-ahead-behind renames no-renames null",
        optional="porcelain untracked-files ignored column find-renames",
    ),
    "diff": _spec(
        _short(**_DIFF_SHORT), none=_DIFF_NONE + " cached staged merge-base", value=_DIFF_VALUE,
        optional=_DIFF_OPTIONAL,
    ),
    "log": _spec(
        _short(**_LOG_SHORT), none=_DIFF_NONE + " " + _LOG_NONE, value=_DIFF_VALUE + " " + _LOG_VALUE,
        optional=_DIFF_OPTIONAL + " pretty decorate glob exclude expand-tabs", attached=_LOG_ATTACHED,
        numeric=True, numeric_suffix="",
    ),
    "show": _spec(
        _short(**_LOG_SHORT), none=_DIFF_NONE + " " + _LOG_NONE, value=_DIFF_VALUE + " " + _LOG_VALUE,
        optional=_DIFF_OPTIONAL + " pretty decorate expand-tabs", attached=_LOG_ATTACHED,
        numeric=True, numeric_suffix="",
    ),
    "ls-files": _spec(
        _short(none="cdmoisuktvfz", value="x"),
        none="cached deleted modified others ignored stage unmerged killed directory no-empty-directory "
             "exclude-standard full-name error-unmatch eol debug deduplicate",
        value="exclude format with-tree", optional="abbrev",
    ),
    "blame": _spec(
        _short(none="bltsewnfpc", value="L", optional="MC"),
        none="root show-stats porcelain line-porcelain incremental show-name show-number show-email "
             "minimal score-debug no-textconv",
        value="date ignore-rev", optional="abbrev",
    ),
    "grep": _spec(
        _short(none="iIwvnhHlLcoqEFGPzWpa", value="eABCm", path="f"),
        none="and or not all-match cached untracked no-exclude-standard exclude-standard full-name heading "
             "break line-number column name-only files-with-matches files-without-match count "
             "only-matching quiet text ignore-case word-regexp invert-match extended-regexp basic-regexp "
             "fixed-strings perl-regexp null show-function function-context no-color no-textconv",
        value="max-depth max-count after-context before-context context threads",
        optional="color", numeric=True, operands="pattern",
        pattern_flags=frozenset({"-e", "-f"}),
    ),
}
"""Subcommand -> Spec. Everything else (commit, checkout, push, config...) is refused."""

FORCED_ARGS: dict[str, tuple[str, ...]] = {
    "status": ("--ignore-submodules=all",),
    "diff": ("--no-ext-diff", "--no-textconv", "--ignore-submodules=all"),
    "log": ("--no-ext-diff", "--no-textconv"),
    "show": ("--no-ext-diff", "--no-textconv"),
    "blame": ("--no-textconv",),
    "grep": ("--no-textconv",),
}
"""Options put right after the subcommand on every run."""
