"""`ctxagent batch TASKS.jsonl --out DIR`: run many tasks, each in its own working copy.

Parses the options, loads the tasks, picks the backend (ray imported only for `ray`), and
hands them to `ctxagent.batch.driver.run_batch` with the progress display or `--json`
events. Exit 0 when every task of the file is recorded as finished, 1 otherwise, 130 on Ctrl-C.
Reference: docs/batch.md.
"""

from __future__ import annotations

from pathlib import Path

import click

from ctxagent.cli.run_cmd import exec_options, model_options, protocol_option, trust_option


def register(cli: click.Group) -> None:
    """Add `batch` to the CLI."""
    cli.add_command(batch_command)


@click.command("batch")
@click.argument("tasks_file", metavar="TASKS.jsonl", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--out", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="folder for results.jsonl, preds.jsonl and sessions/ (a rerun resumes)")
@click.option("--workers", type=click.IntRange(1, 1024), help="tasks at once (default: the cores, or Ray's CPUs)")
@click.option("--backend", type=click.Choice(["local", "ray"]), default="local", show_default=True,
              help="local process pool, or Ray tasks")
@click.option("--ray-address", metavar="auto|ray://HOST:PORT", help="the Ray cluster to use (default: start one "
              "on this machine for the run)")
@click.option("--num-cpus", type=click.FloatRange(0.01, 1024), default=1.0, show_default=True,
              help="CPUs each Ray task reserves")
@click.option("--retries", type=click.IntRange(0, 100), default=1, show_default=True,
              help="extra attempts of a task whose worker died")
@click.option("--retry-failed", is_flag=True, help="run again the tasks recorded as failed")
@click.option("--json", "as_json", is_flag=True, help="print one JSON object per batch event on stdout")
@click.option("--yes", "-y", is_flag=True, help="approve every patch (without it no patch is applied: nobody is "
              "there to ask)")
@click.option("--max-steps", type=click.IntRange(1, 10_000), help="most model calls per task (a task's own max_steps wins)")
@click.option("--timeout", "timeout_s", type=click.FloatRange(0.1, 86_400), help="seconds per task's turn "
              "(a task's own timeout_s wins)")
@click.option("--command-timeout", type=click.FloatRange(1, 86_400), default=900.0, show_default=True,
              help="seconds each task's setup and test line may take")
@exec_options
@model_options
@protocol_option
@trust_option
def batch_command(tasks_file: Path, out: Path, workers: int | None, backend: str, ray_address: str | None,
                  num_cpus: float, retries: int, retry_failed: bool, as_json: bool, yes: bool,
                  max_steps: int | None, timeout_s: float | None, command_timeout: float, mode: str | None,
                  allow_exec: bool | None, model: str | None, base_url: str | None, provider: str | None, protocol: str | None,
                  trust_repo: bool) -> int:
    """Run every task of TASKS.jsonl, each in its own working copy, into --out."""
    from ctxagent.batch.driver import run_batch
    from ctxagent.batch.tasks import load_tasks
    from ctxagent.batch.worker import RunOptions

    tasks = load_tasks(tasks_file, check_repos=backend == "local")  # Ray: the nodes' paths may differ
    options = RunOptions(yes=yes, mode=mode, allow_exec=allow_exec, model=model, base_url=base_url,
                         provider=provider, protocol=protocol, max_steps=max_steps, timeout_s=timeout_s,
                         trust_repo=trust_repo, command_timeout_s=command_timeout)
    runner = _backend(backend, workers, retries, ray_address, num_cpus, out)
    if not yes:
        click.echo("ctxagent batch: without --yes every patch is refused (nobody to ask); the tasks can only "
                   "answer", err=True)
    sink, display = _sink(as_json, getattr(runner, "workers", None) or workers or 1)
    try:
        with display:
            counts = run_batch(tasks, out, runner, options, sink=sink, retry_failed=retry_failed)
    except KeyboardInterrupt:
        import signal

        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the workers are stopped: one more Ctrl-C must not cut the exit
        click.echo(f"interrupted: what finished is in {out}; run the same command again to go on", err=True)
        return 130
    return 0 if counts["unfinished"] == 0 else 1


def _backend(name: str, workers: int | None, retries: int, address: str | None, num_cpus: float, out: Path):
    if name == "ray":
        from ctxagent.batch.backends.ray_backend import RayBackend

        return RayBackend(workers, retries=retries, address=address, num_cpus=num_cpus)
    if address:
        raise click.BadParameter("--ray-address needs --backend ray", param_hint="--ray-address")
    from ctxagent.batch.backends.local import LocalBackend

    out.mkdir(parents=True, exist_ok=True)
    return LocalBackend(workers, retries=retries, log=out / "workers.log")


def _sink(as_json: bool, workers: int):
    import contextlib
    import sys

    if as_json:
        from ctxagent.cli.jsonout import JsonLinesSink

        stream = _own_stdout()
        return _EventWriter(JsonLinesSink(stream=stream)), (contextlib.nullcontext() if stream is sys.stdout
                                                           else _closing_quietly(stream))
    from ctxagent.batch.progress import Progress

    progress = Progress(workers=workers)
    return progress, progress


def _own_stdout():
    """A stream on the real stdout for the JSON events, with fd 1 pointed at stderr: what a
    library prints there (Ray's "(raylet) A worker died ...") cannot break the JSON lines."""
    import os
    import sys

    try:
        if sys.stdout.fileno() != 1:
            return sys.stdout
    except (AttributeError, OSError, ValueError):  # a captured stdout (click's CliRunner): nothing to guard
        return sys.stdout
    sys.stdout.flush()
    stream = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    os.dup2(2, 1)
    return stream


class _EventWriter:
    """The `--json` sink. When its reader goes away (`| head`, a killed `jq`), the batch goes
    on without events rather than dying with its tasks' work unrecorded."""

    def __init__(self, writer) -> None:
        self.writer, self.closed = writer, False

    def __call__(self, event: dict) -> None:
        if self.closed:
            return
        try:
            self.writer.write(event)
        except (BrokenPipeError, ConnectionResetError):
            self.closed = True
            click.echo("ctxagent batch: stdout was closed; the batch goes on without events (results in --out)",
                       err=True)


def _closing_quietly(stream):
    import contextlib

    @contextlib.contextmanager
    def closing():
        try:
            yield stream
        finally:
            try:
                stream.close()
            except BrokenPipeError:
                pass  # its reader is gone; what it missed is in the results files

    return closing()
