"""`--json` output: one JSON object per line per event, on stdout, flushed at once.

Each line is `event.to_dict()` (`{"type": ..., ...}`; see `ctxagent.agent.events`),
with known secrets redacted, and the characters JSON leaves raw but a terminal obeys
escaped (`ctxagent.cli.safe_text.safe_json`). Nothing else is written to stdout in this mode.
"""

from __future__ import annotations

import sys
from typing import IO, Iterable

from ctxagent.agent.events import Event
from ctxagent.cli.safe_text import safe_json
from ctxagent.redaction import redact


class JsonLinesSink:
    """A sink writing each event as one JSON line to `stream` (default stdout)."""

    def __init__(self, stream: IO[str] | None = None, *, secrets: Iterable[str] = ()) -> None:
        self.stream = stream or sys.stdout
        self.secrets = list(secrets)

    def __call__(self, event: Event) -> None:
        self.write(event.to_dict())

    def write(self, record: dict) -> None:
        """Write any JSON-ready dict as one line (also used for the final `result` line)."""
        self.stream.write(safe_json(redact(record, self.secrets), default=str) + "\n")
        self.stream.flush()
