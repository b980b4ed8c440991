"""Allow-lists of flags, one table per read-only command of the terminal tool.

An unlisted flag is refused; abbreviations too. Value kinds: NONE, VALUE, PATH, OPTIONAL,
ATTACHED; every flag that opens a file is PATH or left out (`tests/shell/test_flag_paths.py`).
Tables from `--help` on Debian 12 (docs/terminal.md, "Module notes").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

NONE, VALUE, PATH, OPTIONAL, ATTACHED = "none", "value", "path", "optional", "attached"


@dataclass(frozen=True)
class Spec:
    """Flags and operands of one command; the kinds: docs/terminal.md, "How a command's words are checked".

    short: letter -> value kind; long: "--name" -> value kind; operands: "paths", "pattern", "script", "program",
    "strings" (tr), "text" or "none"; max_operands: None for no limit; numeric: `-NUM` allowed; numeric_suffix:
    letters allowed after `-NUM` (None: a getopt cluster); permute: flags may follow operands; why: reasons by flag.
    """

    short: Mapping[str, str]
    long: Mapping[str, str]
    operands: str = "paths"
    pattern_flags: frozenset[str] = frozenset()
    max_operands: int | None = None
    numeric: bool = False
    numeric_suffix: str | None = None
    permute: bool = True
    why: Mapping[str, str] = field(default_factory=dict)


def _spec(short_none: str = "", short_value: str = "", short_path: str = "",
          long_none: str = "", long_value: str = "", long_path: str = "",
          long_optional: str = "", **kw: object) -> Spec:
    short = {c: NONE for c in short_none}
    short.update({c: VALUE for c in short_value})
    short.update({c: PATH for c in short_path})
    long: dict[str, str] = {}
    for names, kind in ((long_none, NONE), (long_value, VALUE), (long_path, PATH), (long_optional, OPTIONAL)):
        long.update({f"--{n}": kind for n in names.split()})
    return Spec(short=short, long=long, **kw)  # type: ignore[arg-type]


_FOLLOWS_LINKS = "follows symbolic links, which may lead outside the workspace"
_RUNS = "runs another program"

SPECS: dict[str, Spec] = {
    "ls": _spec(
        short_none="aAbBcCdDfFgGhHiklmnNopqQrRsStuUvxXZ1", short_value="ITw",
        long_none="all almost-all author escape ignore-backups directory dired file-type full-time "
                  "group-directories-first no-group human-readable si dereference-command-line "
                  "dereference-command-line-symlink-to-dir inode kibibytes numeric-uid-gid literal "
                  "hide-control-chars show-control-chars quote-name reverse recursive size context zero",
        long_value="block-size format hide ignore indicator-style quoting-style sort time time-style tabsize width",
        long_optional="color classify hyperlink",
        why={"-L": _FOLLOWS_LINKS, "--dereference": _FOLLOWS_LINKS},
    ),
    "tree": _spec(
        short_none="adfixqNQpugshDFvtcUrCASnJ", short_value="LPIT",
        long_none="noreport dirsfirst prune du si inodes device matchdirs ignore-case",
        long_value="filelimit charset timefmt sort",
        why={"-o": "writes its output to a file", "-l": _FOLLOWS_LINKS, "-R": "writes files",
             "--gitignore": "reads every .gitignore, following symbolic links (issue 17 S9); use rg --files"},
    ),
    "cat": _spec(
        short_none="AbeEnstTuv",
        long_none="show-all number-nonblank show-ends number squeeze-blank show-tabs show-nonprinting",
    ),
    "head": _spec(
        short_none="qvz", short_value="cn", numeric=True, numeric_suffix="bkmclqvz",
        long_none="quiet silent verbose zero-terminated", long_value="bytes lines",
    ),
    "tail": _spec(
        short_none="fFqvz", short_value="cns", numeric=True, numeric_suffix="bclf",
        long_none="quiet silent verbose zero-terminated retry",
        long_value="bytes lines max-unchanged-stats sleep-interval", long_optional="follow",
    ),
    "wc": _spec(
        short_none="cmlLw", long_none="bytes chars lines max-line-length words",
        why={"--files0-from": "reads file names from a file"},
    ),
    "sort": _spec(
        short_none="bdfgiMhnRrVcCmsuz", short_value="ktS",
        long_none="ignore-leading-blanks dictionary-order ignore-case general-numeric-sort "
                  "ignore-nonprinting month-sort human-numeric-sort numeric-sort random-sort reverse "
                  "version-sort merge stable unique zero-terminated debug",
        long_value="sort key field-separator buffer-size parallel batch-size", long_optional="check",
        why={"-o": "writes its output to a file", "--output": "writes its output to a file",
             "-T": "writes temporary files to a directory",
             "--temporary-directory": "writes temporary files to a directory",
             "--compress-program": _RUNS, "--random-source": "reads a file that is not an operand",
             "--files0-from": "reads file names from a file"},
    ),
    "uniq": _spec(
        short_none="cdDiuz", short_value="fsw", max_operands=1,
        long_none="count repeated ignore-case unique zero-terminated",
        long_value="skip-fields skip-chars check-chars", long_optional="all-repeated group",
    ),
    "cut": _spec(
        short_none="nsz", short_value="bcdf",
        long_none="complement only-delimited zero-terminated",
        long_value="bytes characters delimiter fields output-delimiter",
    ),
    "du": _spec(
        short_none="0abchklmPSsx", short_value="Bdt",
        long_none="null all apparent-size bytes total human-readable inodes count-links "
                  "no-dereference separate-dirs si summarize one-file-system",
        long_value="block-size max-depth threshold exclude time-style", long_optional="time",
        why={"-L": _FOLLOWS_LINKS, "--dereference": _FOLLOWS_LINKS,
             "-X": "reads patterns from a file", "--exclude-from": "reads patterns from a file",
             "--files0-from": "reads file names from a file"},
    ),
    "stat": _spec(
        short_none="ft", short_value="c",
        long_none="file-system terse", long_value="format printf cached",
        why={"-L": _FOLLOWS_LINKS, "--dereference": _FOLLOWS_LINKS},
    ),
    "file": _spec(
        short_none="bikN0rshnE", short_value="FeP",
        long_none="brief mime mime-type mime-encoding keep-going no-pad print0 raw special-files "
                  "apple extension no-dereference no-buffer",
        long_value="separator exclude exclude-quiet parameter",
        why={"-z": "runs decompressors", "--uncompress": "runs decompressors",
             "-Z": "runs decompressors", "--uncompress-noreport": "runs decompressors",
             "-C": "writes a compiled magic file", "--compile": "writes a compiled magic file",
             "-p": "changes file access times", "--preserve-date": "changes file access times",
             "-S": "turns off file's own sandbox", "--no-sandbox": "turns off file's own sandbox",
             "-L": _FOLLOWS_LINKS, "--dereference": _FOLLOWS_LINKS},
    ),
    "nl": _spec(
        short_none="p", short_value="bdfhilnsvw",
        long_none="no-renumber",
        long_value="body-numbering section-delimiter footer-numbering header-numbering line-increment "
                   "join-blank-lines number-format number-separator starting-line-number number-width",
    ),
    "tr": _spec(
        short_none="cCdst", long_none="complement delete squeeze-repeats truncate-set1",
        operands="strings", max_operands=2,
    ),
    "diff": _spec(
        short_none="iEZbwBaqsceunyptTrNdH", short_value="ICUWFDxL", short_path="X",
        long_none="ignore-case ignore-file-name-case no-ignore-file-name-case ignore-tab-expansion "
                  "ignore-trailing-space ignore-space-change ignore-all-space ignore-blank-lines text "
                  "strip-trailing-cr brief report-identical-files ed rcs normal side-by-side left-column "
                  "suppress-common-lines show-c-function expand-tabs initial-tab suppress-blank-empty "
                  "recursive no-dereference new-file unidirectional-new-file minimal speed-large-files",
        long_value="ignore-matching-lines width show-function-line label tabsize exclude ifdef "
                   "horizon-lines palette old-line-format new-line-format unchanged-line-format line-format "
                   "old-group-format new-group-format unchanged-group-format changed-group-format",
        long_path="exclude-from from-file to-file", long_optional="context unified color",
        why={"-l": "runs the pr program", "--paginate": "runs the pr program",
             "-S": "not supported here; name the files to compare",
             "--starting-file": "not supported here; name the files to compare"},
    ),
    "pwd": _spec(short_none="LP", operands="none"),
    "echo": _spec(operands="text"),
    "grep": _spec(
        short_none="EFGPiywxzsvbnHhoqaIrULlcTZV", short_value="emdDABC", short_path="f",
        numeric=True, operands="pattern",
        pattern_flags=frozenset({"-e", "--regexp", "-f", "--file"}),
        long_none="extended-regexp fixed-strings basic-regexp perl-regexp ignore-case no-ignore-case "
                  "word-regexp line-regexp null-data no-messages invert-match byte-offset line-number "
                  "line-buffered with-filename no-filename only-matching quiet silent text recursive "
                  "files-without-match files-with-matches count initial-tab null no-group-separator binary",
        long_value="regexp max-count label binary-files directories devices include exclude exclude-dir "
                   "before-context after-context context group-separator",
        long_path="file exclude-from", long_optional="color colour",
        why={"-R": _FOLLOWS_LINKS + "; use -r", "--dereference-recursive": _FOLLOWS_LINKS + "; use -r"},
    ),
    "rg": _spec(
        short_none="scbFilvnxUIN0oPpqSauwH.", short_value="ABCEmMjgtTre", short_path="f",
        operands="pattern",
        pattern_flags=frozenset({"-e", "--regexp", "-f", "--file", "--files", "--type-list"}),
        long_none="auto-hybrid-regex binary block-buffered case-sensitive column count count-matches crlf "
                  "debug files files-with-matches files-without-match fixed-strings glob-case-insensitive "
                  "heading hidden ignore-case ignore-file-case-insensitive include-zero invert-match json "
                  "line-buffered line-number line-regexp max-columns-preview mmap multiline multiline-dotall "
                  "no-config no-filename no-heading no-ignore no-ignore-dot no-ignore-exclude no-ignore-files "
                  "no-ignore-global no-ignore-messages no-ignore-parent no-ignore-vcs no-line-number "
                  "no-messages no-mmap no-pcre2-unicode no-require-git no-unicode null null-data "
                  "one-file-system only-matching passthru pcre2 pretty quiet smart-case stats text trim "
                  "unrestricted vimgrep with-filename word-regexp no-context-separator type-list",
        long_value="after-context before-context color colors context context-separator dfa-size-limit "
                   "encoding engine field-context-separator field-match-separator glob iglob max-columns "
                   "max-count max-depth max-filesize path-separator regex-size-limit regexp replace sort "
                   "sortr threads type type-not type-clear type-add",
        long_path="file ignore-file",
        why={"--pre": "runs a program on every file", "--pre-glob": "belongs to --pre, which runs a program",
             "-z": "runs decompression programs", "--search-zip": "runs decompression programs",
             "-L": _FOLLOWS_LINKS, "--follow": _FOLLOWS_LINKS},
    ),
    "sed": _spec(
        short_none="nErsuz", short_value="el", operands="script",
        pattern_flags=frozenset({"-e", "--expression"}),
        long_none="quiet silent regexp-extended separate unbuffered null-data posix debug sandbox",
        long_value="expression line-length",
        why={"-i": "edits files in place", "--in-place": "edits files in place",
             "-f": "reads a script we cannot check from a file", "--file": "reads a script from a file",
             "--follow-symlinks": "belongs to -i (in-place editing)"},
    ),
    "awk": _spec(
        short_value="Fv", operands="program", permute=False,
        why={"-f": "reads a program we cannot check from a file", "-W": "sets implementation options",
             "--exec": "runs a program file", "-E": "runs a program file"},
    ),
}
"""Command name -> Spec, for the commands checked by the generic flag scanner.
`find` (terminal_find), `git` (terminal_git) and `cd` (the tool itself) have their own."""
