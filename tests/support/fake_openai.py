"""A scripted OpenAI-compatible server on 127.0.0.1 for tests (real HTTP, real SSE).

Speaks `POST .../chat/completions` (streamed and not) and `GET .../models`. Each chat
request takes the next step of the script; when the script runs out, the server answers
with a final text (`default_text`, "done") so an agent loop ends.

Steps are dicts (the helpers below build them):
  {"type": "text", "content": "hi", "reasoning": "...", "reasoning_field": "reasoning_content"}
  {"type": "tool_calls", "calls": [{"name": "ls", "arguments": "{...}", "id": "call_1"}],
   "content": None, "interleave": True}      # interleave: alternate fragments of parallel calls
  {"type": "error", "status": 429, "body": {...} or "text", "headers": {"Retry-After": "1"}}
  {"type": "drop", "after_chunks": 2, ...reply keys...}   # connection closed mid-stream
  {"type": "drop", "after_chunks": 2, "clean": True}      # stream ends cleanly, no finish_reason
  {"type": "drop", "after_chunks": 0, "error": {"message": ...}}  # an error event in the stream
  {"type": "length", "content": ..., "calls": [...]}      # finish_reason "length"
  {"type": "raw", "body": "data: {bad\n\n", "content_type": "text/event-stream", "status": 200}
                                         # the body as given: malformed SSE, an HTML page...
  {"type": "text", "content": "hi", "ignore_stream": True}  # a plain JSON completion even when streamed
FakeOpenAI(models_error=401) answers GET /models with that error (the endpoint check of doctor).
Any streamed step also takes: "chunk_size" (characters per delta, default 4), "delay"
(seconds before each chunk), "usage" (a usage dict to send, or None for none; default
computed), "finish_reason" (override), "empty_content" ("" to send content "" beside
tool calls instead of null).

Python: `with FakeOpenAI(script) as server: base_url = server.base_url` (or
`.start() -> base_url`, `.stop()`). `server.requests` is the list of chat request JSON
bodies, `server.request_headers` their headers (names lower-cased, lookups ignore case;
Authorization included, recorded only here), `server.log` every HTTP request as
{"method", "path", "headers", "body", "client"} (client: [host, port] of the caller). The requests file has lower-case header names.

Rules answer some requests out of the script's order: `FakeOpenAI(script, rules=[{"contains":
"You are compacting", "step": text("## Goal ...")}])` answers every request one of whose
messages contains the text with that step, without taking a step of the script (a
compaction's summary request, whenever the agent makes it). A rule with `"steps": [...]`
instead answers its requests with those steps in order, then lets later requests fall
through (a sub-agent's own script, whatever the order its requests arrive in).
A step with `"barrier": {"name": "b", "count": 2}` is held until `count` requests carrying
that barrier are held at once (proof that they are concurrent), or answered with a 500
"barrier ... not reached" after `timeout` seconds (default 20).

CLI: `python tests/support/fake_openai.py --script script.json --port-file F
[--requests-file R] [--port N]` writes the port to F once listening, appends each
request to R as a JSON line, and serves until killed. The script file is a JSON list of
steps, or {"steps": [...], "default_text": "done", "rules": [...]}.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Iterable

if __package__ in (None, ""):  # run as a script: make `tests.support` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.support.fake_replies import (  # noqa: E402  (re-exported step helpers)
    Reply,
    Step,
    default_error_body,
    drop_stream_after,
    error,
    raw,
    stream_error_after,
    text,
    tool_calls,
)

__all__ = ["FakeOpenAI", "Headers", "Step", "drop_stream_after", "error", "main", "raw", "stream_error_after",
           "text", "tool_calls"]


# ----------------------------------------------------------------- HTTP handler

class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass

    def do_GET(self) -> None:
        self.server.fake._record(self, None)
        if self.path.rstrip("/").endswith("/models") and self.server.fake.models_error is not None:
            self._send_json(self.server.fake.models_error, default_error_body(self.server.fake.models_error))
        elif self.path.rstrip("/").endswith("/models"):
            data = [{"id": m, "object": "model", "owned_by": "fake"} for m in self.server.fake.models]
            self._send_json(200, {"object": "list", "data": data})
        else:
            self._send_json(404, default_error_body(404))

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self._send_json(400, {"error": {"message": "body is not JSON", "type": "invalid_request_error"}})
            return
        fake = self.server.fake
        fake._record(self, body)
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send_json(404, default_error_body(404))
            return
        step, n = fake._next_step(body)
        if step.get("barrier") and not fake._wait_barrier(step["barrier"]):
            self._send_json(500, {"error": {"message": f"barrier {step['barrier']['name']!r} not reached: the "
                                            "requests were not concurrent", "type": "server_error"}})
            return
        if step["type"] == "error":
            self._send_error_step(step)
        elif step["type"] == "raw":
            self._send_raw(step)
        elif body.get("stream") and not step.get("ignore_stream"):
            self._stream(Reply(step, body, n), body)
        else:
            self._send_json(200, Reply(step, body, n).completion(body.get("model", "fake-model")))

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json" if not isinstance(payload, str) else "text/plain")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _send_raw(self, step: Step) -> None:
        data = step.get("body", "").encode()
        self.send_response(step.get("status", 200))
        self.send_header("Content-Type", step.get("content_type", "text/event-stream"))
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _send_error_step(self, step: Step) -> None:
        body = step.get("body")
        self._send_json(step["status"], default_error_body(step["status"]) if body is None else body,
                        step.get("headers"))

    def _stream(self, reply: Reply, request: dict[str, Any]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        step = reply.step
        limit = step.get("after_chunks") if step["type"] == "drop" else None
        base = {"id": f"chatcmpl-fake-{reply.n}", "object": "chat.completion.chunk",
                "created": int(time.time()), "model": request.get("model", "fake-model")}
        sent = 0
        for delta in reply.deltas():
            if limit is not None and sent >= limit:
                return self._cut(step)
            if not self._event({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
                               step.get("delay")):
                return None
            sent += 1
        if limit is not None:
            return self._cut(step)
        final = {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": reply.finish_reason()}]}
        self._event(final, step.get("delay"))
        usage = reply.usage()
        if (request.get("stream_options") or {}).get("include_usage") and usage is not None:
            self._event({**base, "choices": [], "usage": usage}, None)
        self._write_chunk(b"data: [DONE]\n\n")
        self._write_chunk(b"")
        return None

    def _event(self, payload: dict[str, Any], delay: float | None) -> bool:
        if delay and self.server.fake._stopping.wait(delay):
            self._cut({})
            return False
        return self._write_chunk(b"data: " + json.dumps(payload).encode() + b"\n\n")

    def _write_chunk(self, data: bytes) -> bool:
        try:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()
            return True
        except OSError:  # the client went away (cancelled); stop streaming
            self.close_connection = True
            return False

    def _cut(self, step: Step) -> None:
        """End the stream early: with an error event (step "error"), cleanly (step "clean":
        terminating chunk, no finish_reason, no [DONE]) or by a hard close."""
        self.close_connection = True
        if step.get("error") is not None:
            self._write_chunk(b"data: " + json.dumps({"error": step["error"]}).encode() + b"\n\n")
        if step.get("clean") or step.get("error") is not None:
            self._write_chunk(b"")
            return
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeOpenAI

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], OSError):
            return  # a client hung up (cancel, pool closed): normal for these tests
        super().handle_error(request, client_address)


# ----------------------------------------------------------------- public API

class FakeOpenAI:
    """A scripted OpenAI-compatible server; see the module docstring."""

    def __init__(self, script: Iterable[Step] = (), *, default_text: str = "done",
                 models: Iterable[str] = ("fake-model",), port: int = 0, models_error: int | None = None,
                 requests_file: str | os.PathLike[str] | None = None, rules: Iterable[dict[str, Any]] = ()) -> None:
        self.script: list[Step] = [dict(s) for s in script]
        self.rules: list[dict[str, Any]] = [dict(r) for r in rules]
        self.default_text = default_text
        self.models = list(models)
        self.models_error = models_error  # an HTTP status GET /models answers with instead of the list
        self.requests: list[dict[str, Any]] = []
        self.request_headers: list[dict[str, str]] = []
        self.log: list[dict[str, Any]] = []
        self._requests_file = Path(requests_file) if requests_file else None
        self._port = port
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None
        self._served = 0
        self._barrier_lock = threading.Lock()
        self._barriers: dict[str, threading.Condition] = {}

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("FakeOpenAI is not started; call start() first")
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible root to give a client, e.g. http://127.0.0.1:PORT/v1."""
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> str:
        """Listen on 127.0.0.1 (ephemeral port unless one was given); return base_url."""
        self._httpd = _Server(("127.0.0.1", self._port), _Handler)
        self._httpd.fake = self
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True, name="fake-openai")
        self._thread.start()
        return self.base_url

    def stop(self) -> None:
        """Stop serving; pending slow streams are cut. Safe to call twice."""
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def add(self, *steps: Step) -> None:
        """Append steps to the script (thread-safe, also while serving)."""
        with self._lock:
            self.script.extend(dict(s) for s in steps)

    def __enter__(self) -> FakeOpenAI:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _next_step(self, body: dict[str, Any] | None = None) -> tuple[Step, int]:
        texts = [m.get("content") for m in (body or {}).get("messages") or [] if isinstance(m, dict)]
        with self._lock:
            self._served += 1
            for rule in self.rules:
                if any(isinstance(t, str) and rule["contains"] in t for t in texts):
                    if "steps" not in rule:
                        return dict(rule["step"]), self._served
                    if rule["steps"]:
                        return dict(rule["steps"].pop(0)), self._served
            if self.script:
                return self.script.pop(0), self._served
            return text(self.default_text), self._served

    def _wait_barrier(self, barrier: dict[str, Any]) -> bool:
        """Hold this request until `barrier["count"]` requests wait at the barrier of that name;
        False after its timeout (seconds, default 20)."""
        with self._barrier_lock:
            held = self._barriers.setdefault(barrier["name"], threading.Condition(self._barrier_lock))
            held.arrived = getattr(held, "arrived", 0) + 1  # type: ignore[attr-defined]
            held.notify_all()
            return held.wait_for(lambda: held.arrived >= barrier["count"],  # type: ignore[attr-defined]
                                 timeout=float(barrier.get("timeout", 20)))

    def _record(self, handler: BaseHTTPRequestHandler, body: dict[str, Any] | None) -> None:
        headers = Headers((k.lower(), v) for k, v in handler.headers.items())
        entry = {"method": handler.command, "path": handler.path, "headers": headers, "body": body,
                 "client": list(handler.client_address)}
        with self._lock:
            self.log.append(entry)
            if body is not None and handler.path.rstrip("/").endswith("/chat/completions"):
                self.requests.append(body)
                self.request_headers.append(headers)
            if self._requests_file is not None:
                with self._requests_file.open("a", encoding="utf-8") as f:
                    f.write(json.dumps(entry) + "\n")


class Headers(dict):
    """Request headers with lower-case names; lookups ignore case ("Authorization" works)."""

    def __getitem__(self, key: str) -> str:
        return super().__getitem__(key.lower())

    def get(self, key: str, default: Any = None) -> Any:
        return super().get(key.lower(), default)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and super().__contains__(key.lower())


def _load_script(path: str) -> tuple[list[Step], str, list[dict[str, Any]]]:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if isinstance(data, dict):
        return list(data.get("steps", [])), data.get("default_text", "done"), list(data.get("rules", []))
    return list(data), "done", []


def main(argv: list[str] | None = None) -> int:
    """CLI entry point; serves until killed (SIGTERM/SIGINT)."""
    parser = argparse.ArgumentParser(description="Scripted fake OpenAI server for tests.")
    parser.add_argument("--script", help="JSON file: a list of steps or {steps, default_text}")
    parser.add_argument("--port-file", required=True, help="file to write the listening port to")
    parser.add_argument("--requests-file", help="append each request here as a JSON line")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    steps, default_text, rules = _load_script(args.script) if args.script else ([], "done", [])
    server = FakeOpenAI(steps, default_text=default_text, port=args.port, requests_file=args.requests_file,
                        rules=rules)
    server.start()
    tmp = Path(args.port_file + ".tmp")
    tmp.write_text(str(server.port), encoding="utf-8")
    os.replace(tmp, args.port_file)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
