"""The rules that find secrets in text, for `ctxagent.redaction` (one pass per rule, in this order).

`PEM` (gitleaks `private-key`), `URL_PASSWORD` (detect-secrets `BasicAuthDetector`),
`SHAPES` (gitleaks and detect-secrets key shapes), `KV` (detect-secrets
`KeywordDetector`), `looks_secret`. Names, values and what is not caught:
docs/redaction.md ("The rules", "Which names, which values").
"""

from __future__ import annotations

import re
from typing import Any


class _Lazy:
    """A regex compiled on its first use (`.sub`, `.search`, ... as `re.Pattern`): compiling
    every rule costs about 27 ms, paid by each command at import; most calls need few rules."""

    __slots__ = ("_source", "_flags", "_pattern")

    def __init__(self, source: str, flags: int = 0) -> None:
        self._source, self._flags, self._pattern = source, flags, None

    def __getattr__(self, name: str) -> Any:
        if name in _Lazy.__slots__:  # not set yet (a copy being made): no recursion
            raise AttributeError(name)
        if self._pattern is None:
            self._pattern = re.compile(self._source, self._flags)
        return getattr(self._pattern, name)


def _lazy(source: str, flags: int = 0) -> re.Pattern[str]:
    """`re.compile(source, flags)`, compiled when first used (`_Lazy`)."""
    return _Lazy(source, flags)  # type: ignore[return-value]

#: What a secret is replaced by (re-exported as `ctxagent.redaction.REDACTED`).
REDACTED = "[REDACTED]"
#: Values shorter than this are never taken for secrets by the name rule (`KV`).
MIN_VALUE_LEN = 8
_KEY_QUALIFIERS = ("api", "app", "application", "access", "account", "auth", "client", "consumer", "db",
                   "database", "deploy", "encryption", "hmac", "license", "master", "private", "priv", "secret",
                   "service", "session", "signing", "ssh", "storage", "subscription", "webhook")
_NAME_WORDS = ("password", "passwd", "pwd", "passphrase", "secret", "token", "credentials", "credential",
               "authorization", "auth")
_KEY_SUFFIXES = ("b64", "base64", "hex", "base", "value", "prod", "production", "dev", "test", "staging", "live")


def _cases(word: str) -> list[str]:
    """`word` as lower, UPPER and Capitalized (camelCase parts): the forms names are written in."""
    return sorted({word.lower(), word.upper(), word.capitalize()})


def _alternation(forms: list[str]) -> str:
    """Alternatives grouped by first character, each group starting with that literal
    character: the regex engine then skips, in C, every position no name can start at
    (this is what keeps the name rule at ~15 ms per MB)."""
    groups: dict[str, list[str]] = {}
    for form in sorted(forms, key=len, reverse=True):
        groups.setdefault(form[0], []).append(form[1:])
    return "|".join(re.escape(first) + "(?:" + "|".join(rests) + ")" for first, rests in groups.items())


def _name_forms() -> list[str]:
    """Every name ending the rule accepts, as regex fragments (escaped literals), but `_KEY`."""
    words = [re.escape(f) for w in _NAME_WORDS for f in _cases(w)]
    key = "(?:key|KEY|Key)"
    return [*words, *(re.escape(f) + "[_.-]?" + key for q in _KEY_QUALIFIERS for f in _cases(q))]


# The scanning form: the words, and `key` alone; the qualifier before a `key` is checked
# afterwards (`_QUALIFIED`): 75 qualified forms in the scan would double its time.
_NAME = "(?:" + _alternation([*(re.escape(f) for w in _NAME_WORDS for f in _cases(w)), "key", "KEY", "Key",
                               "pass", "PASS", "Pass"]) + ")"
_QUALIFIED = _lazy("(?:" + _alternation([re.escape(f) for q in _KEY_QUALIFIERS for f in _cases(q)]) + ")[_.-]?\\Z")
_SUFFIX = "(?:[_.-]?(?:\\d{1,3}|" + "|".join(f for s in _KEY_SUFFIXES for f in _cases(s)) + "))?"
_CLOSE = r"\\?[\"']?\]?"  # the end of a quoted or indexed name: "NAME": / ["NAME"] = / \"NAME\":
_TYPE_CHARS = r"A-Za-z0-9_.\[\], \t|"  # what a type annotation is written with (ASCII only, as keys are)
_TYPE_ATOM = r"[A-Za-z_][A-Za-z0-9_.]*(?:\[[A-Za-z0-9_.\[, \t|]*\]+)?"
_TYPE = _TYPE_ATOM + r"(?:[ \t]*\|[ \t]*" + _TYPE_ATOM + r"){0,3}"  # str, Optional[str], str | None
_SEP = r"(?::=|=>|\?=|=(?!=)|:(?!:))"
_SCHEMES = r"(?:Bearer|bearer|BEARER|Basic|basic|BASIC|Token|token|Digest|digest)"
# Values are printable ASCII (what StreamRedactor holds back): quoted, anything but quotes,
# backslash and space; unquoted, also no brackets, `,;&|` (they end a statement or a query).
_QUOTED_CHARS = r"!#-&(-\[\]-_a-z{-~"
_UNQUOTED = r"[A-Za-z0-9!#$%*+\-./:=?@^_~]+"
KV = _lazy(
    f"(?P<name>{_NAME}){_SUFFIX}(?![A-Za-z0-9])(?P<close>{_CLOSE})(?P<ws>[ \\t]*)"
    f"(?P<ann>:(?=[{_TYPE_CHARS}]{{0,80}}=)[ \\t]*{_TYPE}[ \\t]*(?==))?"  # an annotation: `: str | None =`
    f"(?P<sep>{_SEP})[ \\t]*(?:(?P<scheme>{_SCHEMES})[ \\t]+)?"
    f"(?:(?P<bs>\\\\?)(?P<q>[\"'`])(?:{_SCHEMES}[ \\t]+)?(?P<qv>[{_QUOTED_CHARS}]*)(?P=bs)(?P=q)"
    f"|(?P<uv>{re.escape(REDACTED)}|{_UNQUOTED}))"  # REDACTED: a redacted text parses as the text did
)
#: A line that may still become `NAME = value` when more text comes (for StreamRedactor):
#: the name and any part of what follows it up to the value, ending at the end of the text.
KV_OPEN_TAIL = _lazy(
    f"{_NAME}{_SUFFIX}(?![A-Za-z0-9]){_CLOSE}[ \\t]*"
    f"(?::[{_TYPE_CHARS}]{{0,80}})?"  # `: ` or `: str | None ` (a superset of KV's: one class, no backtracking)
    f"(?:{_SEP}[ \\t]*(?:\\\\?[\"'`]?{_SCHEMES}[ \\t]+)?)?\\Z"
)

_BREAK = r"(?:\s|\\[rn])"  # a line break, real or written `\n` inside a JSON string
_PEM_LABEL = r"-----(?:BEGIN|END)[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
PEM = _lazy(
    _PEM_LABEL.replace("(?:BEGIN|END)", "BEGIN")
    + f"(?:{_BREAK}+[A-Za-z][A-Za-z0-9_-]*:[^\\n\\\\:]*)*"      # armor headers: Proc-Type: 4,ENCRYPTED
    + f"{_BREAK}+[A-Za-z0-9+/]{{40,}}[A-Za-z0-9+/=]*"  # the first base64 line, a whole line
    + r"(?=[ \t]*(?:\r?\n|\\[rn]|-----|\Z))"  # (not `<sha> 2 2` of `git blame -p`: secret_blocks)
    + f"(?:{_BREAK}+[A-Za-z0-9+/=]+)*"                 # the other lines
    + f"(?:{_BREAK}*{_PEM_LABEL.replace('(?:BEGIN|END)', 'END')})?"
)
PEM_END = _lazy(_PEM_LABEL.replace("(?:BEGIN|END)", "END"))
#: A whole key on one line, its lines joined by `,` or `;` (`paste -sd,`, a CSV cell).
PEM_ONE_LINE = _lazy("(?P<begin>" + _PEM_LABEL.replace("(?:BEGIN|END)", "BEGIN") + r")(?P<sep>[,;|\t ]?)"
                          + r"(?:(?!\\[rn])[^\n]){40,}?(?P<end>" + _PEM_LABEL.replace("(?:BEGIN|END)", "END") + ")")
#: What a private key block may look like while it is still arriving (for StreamRedactor).
PEM_OPEN = _lazy(
    r"-{1,5}BEGIN[A-Z0-9 ]*(?:PRIVATE KEY(?: BLOCK)?-{0,5}"
    f"(?:{_BREAK}+(?:[A-Za-z][A-Za-z0-9_-]*:[^\\n\\\\:]*|[A-Za-z0-9+/=]+))*{_BREAK}*\\\\?"
    r"(?:-{1,5}(?:END[A-Z0-9 ]*)?)?)?\Z"
)

_USERINFO = r"A-Za-z0-9_.~!$%&()*+,;=\-"  # RFC 3986 unreserved, sub-delims and %: printable ASCII, as keys are
URL_PASSWORD = _lazy(f"(?P<head>://[{_USERINFO}]*:)(?P<pw>[{_USERINFO}:]+)(?=@)")

_AFTER_WORD = r"(?<![A-Za-z0-9_].)"  # placed after a shape's first character: no letter, digit or _ before it


def _shapes(by_first: dict[str, list[str]]) -> str:
    """One alternative per first character (a literal, then _AFTER_WORD, then the rests):
    the regex engine skips in C every position no shape starts at, and tries one group."""
    return "|".join(re.escape(first) + _AFTER_WORD + "(?:" + "|".join(rests) + ")"
                    for first, rests in by_first.items())


SHAPES = _lazy(_shapes({
    "s": [r"k-[A-Za-z0-9_-]{16,}",                                  # OpenAI, Anthropic (sk-ant-), DeepSeek
          r"k_(?:live|test)_[A-Za-z0-9]{10,}",                      # Stripe secret key
          r"hp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}",                     # [shopify-access-token, -custom-access-token...]
          r"q0(?:atp|csp)-[0-9A-Za-z_-]{22,}",                      # [square-access-token, square-secret]
          r"ecret_[A-Za-z0-9]{43}(?![A-Za-z0-9])"],                 # Notion integration token (old form)
    "r": [r"k_(?:live|test)_[A-Za-z0-9]{10,}",                      # Stripe restricted key
          r"ubygems_[a-f0-9]{48}",                                  # [rubygems-api-token]
          r"8_[A-Za-z0-9]{37}(?![A-Za-z0-9])"],                     # Replicate API token
    "w": [r"hsec_[A-Za-z0-9]{24,}"],                                # Stripe webhook secret
    "g": [r"h[pousr]_[A-Za-z0-9]{20,}", r"ithub_pat_[A-Za-z0-9_]{22,}",  # GitHub
          r"l(?:pat|dt|ptt|rt|cbt|ft|imt|oas|soat|ffct|agent)-[A-Za-z0-9_-]{20,}",  # GitLab
          r"sk_[A-Za-z0-9]{52}",                                    # Groq
          r"lsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}",                    # [grafana-service-account-token]
          r"lc_[A-Za-z0-9+/]{32,}={0,2}"],                          # [grafana-cloud-api-token]
    "G": [r"R1348941[A-Za-z0-9_-]{20,}"],                           # GitLab runner registration
    "x": [r"ox[abeoprs]-[A-Za-z0-9-]{10,}", r"app-\d-[A-Za-z0-9-]{10,}"],  # Slack
    "A": [r"(?:KIA|SIA|BIA|CCA|3T[A-Z0-9])[A-Z0-9]{16}(?![A-Za-z0-9])",     # AWS access key id
          r"Iza[A-Za-z0-9_-]{35}",                                  # Google API key
          r"GE-SECRET-KEY-1[0-9A-Z]{58}"],                          # [age-secret-key]
    "h": [r"f_[A-Za-z0-9]{20,}",                                    # Hugging Face
          r"ooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,}"],  # [slack-webhook-url]
    "e": [r"yJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*"],  # JWT
    "n": [r"pm_[A-Za-z0-9]{36}",                                    # npm
          r"tn_[A-Za-z0-9]{40,}"],                                  # Notion integration token
    "p": [r"ypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}"],                # PyPI upload token
    # issue 17, S7 (gitleaks rule names in brackets)
    "S": [r"G\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}",                # [sendgrid-api-token]
          r"K[0-9a-fA-F]{32}(?![A-Za-z0-9])"],                      # [twilio-api-key]
    "d": [r"o[opr]_v1_[a-f0-9]{64}",                                # [digitalocean-pat/-access-token/-refresh-token]
          r"ckr_pat_[A-Za-z0-9_-]{27,}",                            # Docker Hub personal access token
          r"api[a-f0-9]{32}(?![A-Za-z0-9])",                        # [databricks-api-token]
          r"p\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}",         # [doppler-api-token]
          r"iscord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]{20,}"],  # Discord webhook URL
    "P": [r"MAK-[a-f0-9]{24}-[a-f0-9]{34}"],                        # [postman-api-token]
    "k": [r"ey-[0-9a-f]{32}(?![A-Za-z0-9])"],                       # [mailgun-private-api-token]
    "l": [r"in_api_[A-Za-z0-9]{40}"],                               # [linear-api-key]
}) + "|" + "|".join(re.escape(word[0]) + _AFTER_WORD + re.escape(word[1:]) + r"\s+[A-Za-z0-9._~+/=-]{12,}"
                   for word in ("Bearer", "bearer", "BEARER")))

#: Secrets in a form of their own (issue 17, S7): (a literal the text must hold, a pattern whose
#: group `v` is the secret). `define` and `.netrc` values need `looks_secret`-free matching:
#: the form itself says it is a password.
FORMS: list[tuple[str, re.Pattern[str]]] = [
    (":A", _lazy(r":(?<=[0-9]{5}:)(?P<v>A[A-Za-z0-9_-]{34})(?![A-Za-z0-9_-])")),  # [telegram-bot-api-token]
    ("sig=", _lazy(r"s(?<=[?&]s)ig=(?P<v>[A-Za-z0-9%+/=]{16,})")),  # Azure SAS signature (also AWS/GCS signed URLs' sig)
    ("-data", _lazy(r"client-(?:key|certificate)-data[ \t]*:[ \t]*[\"']?(?P<v>[A-Za-z0-9+/=]{16,})")),  # kubeconfig
    ("login", _lazy(r"l(?<![A-Za-z0-9_].)ogin[ \t]+\S+\s+(?:account[ \t]+\S+\s+)?password[ \t]+(?P<v>[^\s$]\S{3,})")),  # .netrc
]
#: PHP `define('DB_PASSWORD', '...')`: the name must end like a credential (`SECRET_NAME`).
DEFINE = _lazy(r"define\(\s*(?P<q1>['\"])(?P<name>[A-Za-z0-9_.-]{1,80})(?P=q1)\s*,\s*(?P<q2>['\"])"
                    r"(?P<v>[^'\"\\\n]*)(?P=q2)")

#: The beginning of a `FORMS`/`DEFINE` secret that spans spaces, at the end of a text still
#: arriving (for StreamRedactor): `define('DB_PASSWORD', `, `login jane password `, `client-key-data: `.
FORMS_OPEN_TAIL = _lazy(
    r"(?:define\((?:\s*(?:['\"][A-Za-z0-9_.-]{0,80}(?:['\"]\s*(?:,\s*)?)?)?)?"
    r"|login(?:[ \t]+\S{0,200}(?:\s+(?:account[ \t]+\S+\s+)?[a-z]{0,8}[ \t]*)?)?"
    r"|client-(?:key|certificate)-data[ \t]*(?::[ \t]*[\"']?)?)\Z")

_NUMBER = _lazy(r"[-+]?(?:0[xX][0-9a-fA-F_]+|\d[\d_]*(?:\.\d*)?(?:[eE][-+]?\d+)?)")
_TEMPLATE = _lazy(r"^[$%{<]|\$\{|\{\{|%\(")
_PATH = _lazy(r"(?:/|~/|\.{1,2}/)(?:[^A-Z]*|.*\.[A-Za-z0-9]+)")
_WORDLIKE = _lazy(r"[A-Za-z_][A-Za-z_.]*")
_NOT_AN_END = frozenset("([{,)]}<>`")


def looks_secret(value: str) -> bool:
    """Whether `value` (a quoted literal, or a value under a credential-named key) may be a
    secret: MIN_VALUE_LEN characters or more, and not a number, a template or a file path."""
    return (len(value) >= MIN_VALUE_LEN and not _NUMBER.fullmatch(value) and not _TEMPLATE.search(value)
            and not _PATH.fullmatch(value))


def _kv_value_is_secret(m: re.Match[str]) -> bool:
    if m.group("qv") is not None:
        return looks_secret(m.group("qv"))
    value, end = m.group("uv"), m.end()
    if value == REDACTED or not looks_secret(value) or (end < len(m.string) and m.string[end] in _NOT_AN_END):
        return False
    env_form = (m.group("name").isupper() and not m.group("close") and not m.group("ws")
                and m.group("ann") is None and m.group("sep") == "=")
    return env_form or m.group("scheme") is not None or not _WORDLIKE.fullmatch(value)


def _name_is_secret(m: re.Match[str]) -> bool:
    """A credential word, a qualified key (`api_key`, `apiKey`), or `_KEY=` in the environment form."""
    name, start = m.group("name"), m.start()
    if name in ("pass", "PASS", "Pass"):  # DB_PASS, smtp.pass, db-pass: never bypass, compass (S7)
        return start > 0 and m.string[start - 1] in "_.-"
    if name not in ("key", "KEY", "Key") or _QUALIFIED.search(m.string, max(0, start - 16), start):
        return True
    return (name == "KEY" and start > 0 and m.string[start - 1] == "_" and not m.group("close")
            and not m.group("ws") and m.group("ann") is None and m.group("sep") == "=")


def replace_kv_value(m: re.Match[str]) -> str:
    """The `KV.sub` callback: the match with its value replaced by REDACTED when the value
    looks like a secret (see the module doc), else the match unchanged."""
    if not (_name_is_secret(m) and _kv_value_is_secret(m)):
        return m.group(0)
    value = "qv" if m.group("qv") is not None else "uv"
    return m.string[m.start():m.start(value)] + REDACTED + m.string[m.end(value):m.end()]


def replace_url_password(m: re.Match[str]) -> str:
    """The `URL_PASSWORD.sub` callback: the password replaced unless it is a template."""
    pw = m.group("pw")
    if pw.startswith(("$", "%s", "%(")):
        return m.group(0)
    return m.group("head") + REDACTED


#: Names of dict keys whose string value is redacted when it `looks_secret` (same names as KV).
SECRET_NAME = _lazy("(?:" + _alternation(_name_forms()) + f"|[_.-](?:pass|PASS|Pass)){_SUFFIX}\\Z")


def replace_form(m: re.Match[str]) -> str:
    """The `FORMS` callback: group `v` replaced by REDACTED (a REDACTED already there is kept)."""
    if m.group("v").startswith(REDACTED[:-1]):
        return m.group(0)
    return m.string[m.start():m.start("v")] + REDACTED + m.string[m.end("v"):m.end()]


def replace_define(m: re.Match[str]) -> str:
    """The `DEFINE.sub` callback: the value redacted when the constant's name is a credential's."""
    if not (SECRET_NAME.search(m.group("name")) and looks_secret(m.group("v"))):
        return m.group(0)
    return m.string[m.start():m.start("v")] + REDACTED + m.string[m.end("v"):m.end()]
