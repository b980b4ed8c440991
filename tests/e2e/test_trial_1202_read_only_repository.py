"""Trial of 2026-12-02: in a read-only checkout `run` said only "cannot create the state
folder ...: Read-only file system", and `doctor` promised "the first command that keeps
state makes it". Both now say the folder cannot be made and what to do (real CLI).

Made read-only by its mode: a user other than root cannot write it (the trial used a
read-only bind mount, which tests cannot make without privileges)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tests.e2e.conftest import model_env
from tests.support.fake_openai import text

WHAT_TO_DO = "make the repository writable, or work in a writable copy (`git worktree add` or `cp -r`)"


@pytest.fixture
def read_only(repo: Path):
    mode = repo.stat().st_mode
    repo.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    try:
        if os.access(repo, os.W_OK):
            pytest.skip("this user (root) can write a folder of mode 555")
        yield repo
    finally:
        repo.chmod(mode)


def test_run_and_doctor_say_what_to_do(ctxagent, fake_server, read_only: Path) -> None:
    server = fake_server([text("hi")])
    proc = ctxagent("run", "hi", "--repo", str(read_only), extra_env=model_env(server))
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert f"cannot create the state folder {read_only / '.ctxagent'}" in proc.stderr
    assert WHAT_TO_DO in " ".join(proc.stderr.split())
    doctor = ctxagent("doctor", "--repo", str(read_only), extra_env={**model_env(server), "COLUMNS": "200"})
    said = " ".join(doctor.stdout.split())
    assert f"state folder: {read_only / '.ctxagent'} cannot be created: {read_only} is not writable" in said
    assert WHAT_TO_DO in said and "the first command that keeps state makes it" not in said
    assert not (read_only / ".ctxagent").exists()
