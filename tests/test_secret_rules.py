"""The secret rules (`ctxagent.secret_rules`, applied by `redact`): each class of secret a
tester found passing through (`cat settings.py` put them in the transcript and snapshots)
is redacted, the name stays readable, and the ordinary code the model must read and patch
is left exactly as it is."""

from __future__ import annotations

import pytest

from ctxagent.redaction import REDACTED, redact

AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
JWT = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
PEM_BODY = ("MIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8QuKUpRKfFLfRYC9AIKjbJTWit+CqvjWYzv\n"
            "QwECAwEAAQJAIJLixBy2qpFoS4DSmoEmo3qGy0t6z09AIJtH+5OeRV1be+N4cDYJKffGzDa88vQENZiRm0GRq6a+HPGQMd2k\n"
            "TQIhAKMSvzIBnni7ot/OSie2TmJLY4SwTQAevXysE2RbFDYdAiEBCUEaRQnMnbp79mxDXDf6AU0cN/RPBjb9qSHDcWZHGzU=")

# (text, the secret that must disappear, what must still be shown)
SECRETS = [
    (f"AWS_SECRET_ACCESS_KEY={AWS_SECRET}", AWS_SECRET, "AWS_SECRET_ACCESS_KEY="),
    (f'aws_secret_access_key = "{AWS_SECRET}"', AWS_SECRET, "aws_secret_access_key = "),
    ("AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE", "AWS_ACCESS_KEY_ID="),
    ("session ASIAY34FZKBOKMUTVV7A in use", "ASIAY34FZKBOKMUTVV7A", "session "),
    ("export OPENAI_API_KEY=abc123def456ghi789", "abc123def456ghi789", "export OPENAI_API_KEY="),
    ("STRIPE=sk_live_4eC39HqLyjWDarjtT1zdp7dc", "4eC39HqLyjWDarjtT1zdp7dc", "STRIPE="),
    ("rk_live_51H8tGq2eZvKYlo2C0123456789", "51H8tGq2eZvKYlo2C0123456789", ""),
    ("stripe.api_key = 'sk_test_26PHem9AhJZvU623DfE1x4sd'", "26PHem9AhJZvU623DfE1x4sd", "stripe.api_key = "),
    ("maps: AIzaSyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe", "AIzaSyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe", "maps: "),
    ("git clone with glpat-xXy7Zq3hF2kLmN0pQrSt here", "glpat-xXy7Zq3hF2kLmN0pQrSt", "git clone with "),
    ("SLACK=xoxb-2633594206-8573922105-GkwFDQoHqzXDVsC6GzqYUypD", "GkwFDQoHqzXDVsC6GzqYUypD", "SLACK="),
    ("user xoxp-41684372915-1320496754-45609968301-e708ba56e1517a99", "e708ba56e1517a99", "user "),
    ("GITHUB=github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "github_pat_11ABCDEFG", "GITHUB="),
    (f"cookie: session={JWT}; path=/", JWT[40:70], "cookie: session="),
    (f'{{"id_token": "{JWT}"}}', JWT[:30], '{"id_token": "'),
    ("password: hunter2horse", "hunter2horse", "password: "),
    ('{"password": "correct-horse"}', "correct-horse", '{"password": "'),
    ("DB_PASSWORD=hunter2horse", "hunter2horse", "DB_PASSWORD="),
    ("DB_PASSWORD=letmeinplease", "letmeinplease", "DB_PASSWORD="),
    ("db_password: str = 'hunter2horse'", "hunter2horse", "db_password: str = '"),
    ("api_key: str | None = \"abc123def456\"", "abc123def456", "api_key: str | None = "),
    ('config["client_secret"] = "9f8e7d6c5b4a"', "9f8e7d6c5b4a", 'config["client_secret"] = "'),
    ('$db_password => "s3cr3t-value",', "s3cr3t-value", "$db_password => "),
    ("token := \"0123abcd4567efgh\"", "0123abcd4567efgh", "token := "),
    ("clientSecret: 'Zm9vYmFyYmF6cXV4'", "Zm9vYmFyYmF6cXV4", "clientSecret: "),
    ("spring.datasource.password=Pa55w0rd!", "Pa55w0rd!", "spring.datasource.password="),
    ("curl 'https://api.example.com/v1?api_key=abc123def456&q=1'", "abc123def456", "?api_key="),
    ("SENTRY_KEY=9a8b7c6d5e4f3a2b", "9a8b7c6d5e4f3a2b", "SENTRY_KEY="),
    ('export MAPBOX_KEY="pk9a8b7c6d5e4f3a2b"', "pk9a8b7c6d5e4f3a2b", "export MAPBOX_KEY="),
    ("const apiKey = 'Zm9vYmFyYmF6cXV4';", "Zm9vYmFyYmF6cXV4", "const apiKey = "),
    ('"env": ["DB_PASSWORD=hunter2horse"]', "hunter2horse", '"env": ["DB_PASSWORD='),
    ('{"content": "DB_PASSWORD = \\"hunter2horse\\"\\nDEBUG = 1"}', "hunter2horse", "\\nDEBUG = 1"),
    ("DATABASE_URL=postgres://app:s3cret-pw@db.internal:5432/app", "s3cret-pw", "postgres://app:"),
    ("https://user:pass@example.com/repo.git", ":pass@", "https://user:"),
    ("https://x-access-token:abcdef0123456789@github.com/o/r", "abcdef0123456789", "@github.com/o/r"),
    ("Authorization: Bearer abcdefghijklmnop.qrstuvwx", "abcdefghijklmnop", "Authorization: "),
    ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA==", "Authorization: Basic "),
    ('headers = {"Authorization": "Token 0a1b2c3d4e5f6a7b"}', "0a1b2c3d4e5f6a7b", '"Authorization": "Token '),
    (f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----\nafter", "MIIBOgIBAAJ", "\nafter"),
    (f"-----BEGIN OPENSSH PRIVATE KEY-----\n{PEM_BODY}\n", "MIIBOgIBAAJ", ""),  # cut off: no END line
    ('{"private_key": "-----BEGIN PRIVATE KEY-----\\n' + PEM_BODY.replace("\n", "\\n")
     + '\\n-----END PRIVATE KEY-----\\n", "client_email": "a@b.iam"}', "QwECAwEAAQJ", '"client_email": "a@b.iam"'),
    ("-----BEGIN ENCRYPTED PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,AB12\n\n"
     f"{PEM_BODY}\n-----END ENCRYPTED PRIVATE KEY-----", "TQIhAKMSvzIB", ""),
]


@pytest.mark.parametrize("text,secret,kept", SECRETS, ids=[s[0][:40] for s in SECRETS])
def test_each_class_of_secret_is_redacted_and_its_name_kept(text: str, secret: str, kept: str) -> None:
    out = redact(text)
    assert secret not in out and REDACTED in out
    assert kept in out


FALSE_POSITIVES = [
    "max_tokens = 4096",
    "token_count = 12345678",
    "tokens = tokenizer(text)",
    "token = tokenizer.encode(text)[0]",
    'KEY_ORDER = ("name", "value", "created_at")',
    "KEY_ORDER = ...",
    "password_field = forms.CharField(max_length=128, widget=forms.PasswordInput)",
    "    def get_token(self):",
    "password = new_password",
    "self.password = password",
    "api_key = settings.OPENAI_API_KEY",
    "token = os.environ['GITHUB_TOKEN']",
    'SECRET_KEY = os.environ.get("SECRET_KEY", "")',
    "SECRET_KEY = get_random_secret_key()",
    "user = User(name=name, password=hashed_password)",
    "    password=db_password,",
    "api_key: SecretStr",
    "token: Optional[str] = None",
    "auth: required",
    "secrets: inherit",
    'AUTH_USER_MODEL = "accounts.User"',
    '__author__ = "jane.doe@example.com"',
    'sort_key = "created_at_desc"',
    'SORT_KEY = "created_at_desc"',
    "monkey = 'bananas-in-pyjamas'",
    "hotkey: ctrl+shift+k",
    'cache_key = "user:profile:v2"',
    "PASSWORD_HASHERS = ['django.contrib.auth.hashers.Argon2PasswordHasher']",
    'DB_PASSWORD = "${DB_PASSWORD}"',
    "password: {{ vault_db_password }}",
    'TOKEN_URL = "https://oauth2.googleapis.com/token"',
    '"token_uri": "https://oauth2.googleapis.com/token",',
    "GOOGLE_APPLICATION_CREDENTIALS=/run/secrets/gcp-sa.json",
    "PWD=/work/main",
    "OLDPWD=/home/dev/src",
    "ssh_key: ~/.ssh/id_ed25519",
    "if password == confirm_password:",
    "eos_token = '<|endoftext|>'",
    'pad_token = "[PAD]"',
    "the task-assessment-framework-v2 flag",
    "use the disk-usage-monitoring-tool",
    "postgres://%s:%s@%s/%s",
    "postgres://{user}:{password}@{host}/db",
    "git@github.com:org/repo.git",
    "ssh://git@github.com:22/org/repo.git",
    'if line.startswith("-----BEGIN RSA PRIVATE KEY-----"):',
    "-----BEGIN RSA PRIVATE KEY-----\n...\n-----END RSA PRIVATE KEY-----",
    "The API key: see below.",
    "Set the password: it must have 12 characters.",
    "a token is a unit of text; max_tokens caps the reply",
    "Bearer tokens are sent in the Authorization header.",
]


@pytest.mark.parametrize("text", FALSE_POSITIVES)
def test_ordinary_code_and_prose_are_left_exactly_as_they_are(text: str) -> None:
    assert redact(text) == text


def test_a_settings_file_the_model_cats_keeps_its_code_and_loses_its_secrets() -> None:
    settings = (
        "import os\n\n"
        f'AWS_SECRET_ACCESS_KEY = "{AWS_SECRET}"\n'
        "AWS_ACCESS_KEY_ID = 'AKIAIOSFODNN7EXAMPLE'\n"
        "DATABASES = {'default': {'PASSWORD': 'hunter2horse', 'HOST': 'db'}}\n"
        "SECRET_KEY = os.environ['SECRET_KEY']\n"
        "MAX_TOKENS = 4096\n"
        "def get_token(self):\n    return self.token\n"
    )
    out = redact(settings)
    assert AWS_SECRET not in out and "AKIAIOSFODNN7EXAMPLE" not in out and "hunter2horse" not in out
    assert out.splitlines()[2] == f'AWS_SECRET_ACCESS_KEY = "{REDACTED}"'
    assert "'PASSWORD': '[REDACTED]', 'HOST': 'db'" in out
    for line in ("SECRET_KEY = os.environ['SECRET_KEY']", "MAX_TOKENS = 4096", "def get_token(self):",
                 "    return self.token"):
        assert line in out.splitlines()


def test_values_under_credential_named_keys_of_a_record_are_redacted() -> None:
    record = {"DB_PASSWORD": "hunter2horse", "clientSecret": "Zm9vYmFyYmF6", "max_tokens": 4096,
              "token_count": "12345678", "password": 1234, "sort_key": "created_at_desc",
              "auth_token": "${AUTH_TOKEN}", "tokens": ["a", "b"]}
    assert redact(record) == {"DB_PASSWORD": REDACTED, "clientSecret": REDACTED, "max_tokens": 4096,
                              "token_count": "12345678", "password": REDACTED, "sort_key": "created_at_desc",
                              "auth_token": "${AUTH_TOKEN}", "tokens": ["a", "b"]}


# Issue 17, S7: the credential families people commonly leak (gitleaks rule names), each a
# sample in the real format (values made up) and the secret that must disappear.
_HEX = "9f86d081884c7d659a2feaa0c55ad015"  # 32 hex characters
_B62 = "Zx8Kq2Lm9Np3Rs4Tv5Wy6Ab7Cd8Ef9Gh0Ij1Kl2Mn3Op4Qr5St6Uv7Wx8Yz9"  # 62 letters and digits
S7_SECRETS = [
    ("DB_PASS=s3cr3t-pass", "s3cr3t-pass"),
    ('export SMTP_PASS="Xk29fj3kdl"', "Xk29fj3kdl"),
    ("redis.pass: 9fj3kdlq7z", "9fj3kdlq7z"),
    ("define('DB_PASSWORD', 'pa55w0rd-prod');", "pa55w0rd-prod"),
    ('define( "AUTH_KEY", "put-your-unique-phrase-here-7e3f" );', "put-your-unique-phrase-here-7e3f"),
    ("machine api.example.com login deploy password Zx9!kq2wLm", "Zx9!kq2wLm"),
    ("machine example.com\n  login jane\n  password hunter2\n", "hunter2"),
    ("    client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlF", "LS0tLS1CRUdJTiBSU0Eg"),
    ("    client-certificate-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1J", "LS0tLS1CRUdJTiBDRVJU"),
    ("    token: 8f3b2c1d9e7a6b5c4d3e2f1a0b9c8d7e", "8f3b2c1d9e7a6b5c4d3e2f1a0b9c8d7e"),
    ("SENDGRID_API=SG.ngeVfQFYQlKU0ufo8x5d1A." + _B62[:43], _B62[:43]),
    ("bot 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0 ok", "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0"),
    ("DO=dop_v1_" + _HEX * 2, _HEX),
    ("shop token shpat_" + _HEX, _HEX),
    ("https://acct.blob.core.windows.net/c/f.txt?sv=2022-11-02&sp=r&se=2026-01-01&sig=k3P%2Fq9xv7Zm2Lw8Yb1Nc4T%3D",
     "k3P%2Fq9xv7Zm2Lw8Yb1Nc4T"),
    ("docker login -p dckr_pat_" + _B62[:27], _B62[:27]),
    ("host = dapi" + _HEX, _HEX),
    ("PMAK-" + _HEX[:24] + "-" + (_HEX * 2)[:34], _HEX[:24]),
    ("MAILGUN key-" + _HEX, _HEX),
    ("lin_api_" + _B62[:40], _B62[:40]),
    ("https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX", "XXXXXXXXXXXXXXXXXXXXXXXX"),
    ("https://discord.com/api/webhooks/123456789012345678/" + _B62[:60], _B62[:60]),
    ("twilio SK" + _HEX, _HEX),
    ("sq0atp-" + _B62[:22], _B62[:22]),
    ("rubygems_" + _HEX + _HEX[:16], _HEX),
    ("GROQ=gsk_" + _B62[:52], _B62[:52]),
    ("glsa_" + _B62[:32] + "_" + _HEX[:8], _B62[:32]),
    ("AGE-SECRET-KEY-1" + "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L" * 2, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"[:20]),
    ("ntn_" + _B62[:46], _B62[:46]),
    ("r8_" + _B62[:37], _B62[:37]),
    ("dp.pt." + _B62[:43], _B62[:43]),
    ("AccountName=acct;AccountKey=" + _B62[:40] + "==;EndpointSuffix=core.windows.net", _B62[:40]),
]


@pytest.mark.parametrize("text,secret", S7_SECRETS, ids=[s[0][:30] for s in S7_SECRETS])
def test_s7_each_credential_family_is_redacted(text: str, secret: str) -> None:
    out = redact(text)
    assert secret not in out and REDACTED in out
    assert redact(out) == out


S7_NEAR_MISSES = [
    'bypass = "maintenance-mode"',
    "compass = 'north-north-west'",
    "        pass",
    "if ok: pass",
    "PASS_THROUGH = 'enabled-always'",
    "define('DB_HOST', 'db.internal.example');",
    "define('WP_DEBUG', false);",
    "define('DB_PASSWORD', getenv('DB_PASSWORD'));",
    "Use the login form; the password field is required.",
    "    client-key-data: ${CLIENT_KEY_DATA}",
    "https://example.com/img.png?sig=abc&w=100",
    "?signature=kept-because-not-sig",
    "MASK0123456789abcdef0123456789abcdef",
    "the dapper dapi client",
    "a key-value store, key-0123",
    "meeting at 12:30:AM, version 1.2.3:Alpha",
    "shpat_123 is too short",
    "SG.is.not.a.token",
    "https://hooks.slack.com/services/",
    "sq0atp- alone",
    "checksum: sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
]


@pytest.mark.parametrize("text", S7_NEAR_MISSES)
def test_s7_near_misses_of_the_new_families_are_left_as_they_are(text: str) -> None:
    assert redact(text) == text
