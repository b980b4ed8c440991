"""`--json` output: one JSON object per line per event, on stdout, flushed at once.

Each line is `event.to_dict()` (`{"type": ..., ...}`; see `ctxagent.agent.events`),
with known secrets redacted. Nothing else is written to stdout in this mode.
"""

from __future__ import annotations

import json
import sys
from typing import IO, Iterable

from ctxagent.agent.events import Event
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
        self.stream.write(json.dumps(redact(record, self.secrets), ensure_ascii=False, default=str) + "\n")
        self.stream.flush()
