"""Entry point of the offline model's server process (started by `LocalServer`).

`python -m ctxagent.llm.local.launcher --model PATH --family chatml --alias NAME --n-ctx 8192
--n-threads 2 --port-file FILE [--port 0] [--parent-pid PID]`: registers ctxagent's chat
handler, binds 127.0.0.1 itself, writes the port once loaded, serves with uvicorn until
SIGTERM, and exits when its parent dies (docs/local-model.md, "How it works").
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
import threading
import time
from pathlib import Path


def _parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="ctxagent.llm.local.launcher")
    p.add_argument("--model", required=True, help="path to the .gguf file")
    p.add_argument("--family", required=True, help="chat family: chatml or gemma")
    p.add_argument("--alias", required=True, help="model name the server answers to")
    p.add_argument("--n-ctx", type=int, default=8192)
    p.add_argument("--n-threads", type=int, default=2)
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--port-file", required=True)
    p.add_argument("--parent-pid", type=int, default=0)
    p.add_argument("--max-calls", type=int, default=3, help="tool results per turn before text is required (0: no limit)")
    p.add_argument("--no-call-first", action="store_true", help="let the model answer without a tool call first")
    p.add_argument("--allow-repeats", action="store_true", help="let the model repeat a call of the same turn")
    return p.parse_args(argv)


def _watch_parent(parent_pid: int) -> None:
    """Exit at once when the parent is gone (we get re-parented)."""
    def watch() -> None:
        while True:
            time.sleep(0.5)
            if os.getppid() != parent_pid:
                os._exit(0)

    threading.Thread(target=watch, daemon=True, name="parent-watch").start()


def _write_port(path: str, port: int) -> None:
    tmp = Path(path + ".tmp")
    tmp.write_text(str(port), encoding="ascii")
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    """Serve until SIGTERM; returns the process exit code."""
    args = _parse(argv)
    if args.parent_pid:
        _watch_parent(args.parent_pid)
    import uvicorn
    from llama_cpp.server.app import create_app
    from llama_cpp.server.settings import ModelSettings, ServerSettings

    from ctxagent.llm.local.handler import TurnPolicy, register_handler

    policy = TurnPolicy(call_first=not args.no_call_first, max_calls=args.max_calls, no_repeat=not args.allow_repeats)
    chat_format = register_handler(args.family, policy)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    port = sock.getsockname()[1]
    threads = max(1, args.n_threads)
    app = create_app(
        server_settings=ServerSettings(host="127.0.0.1", port=port),
        model_settings=[ModelSettings(
            model=args.model, model_alias=args.alias, chat_format=chat_format, n_ctx=args.n_ctx,
            n_threads=threads, n_threads_batch=threads, verbose=False,
        )],
    )
    _write_port(args.port_file, port)
    print(f"ctxagent local server: {args.alias} on 127.0.0.1:{port}", file=sys.stderr, flush=True)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=2))
    server.run(sockets=[sock])
    return 0


if __name__ == "__main__":
    sys.exit(main())
