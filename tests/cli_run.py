"""Running the operator command line as a separate process against the test
database (``tests/cli/test_cli.py`` does the same for its own module), forked from
a process that has imported it already (``tests.cli_process``)."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.cli_process import run_cli


class Ran:
    def __init__(self, result: subprocess.CompletedProcess[str]):
        self.stdout, self.stderr, self.code = result.stdout, result.stderr, result.returncode

    def json(self) -> Any:
        return json.loads(self.stdout)  # exactly one JSON document on stdout


Run = Callable[..., Ran]


@pytest.fixture
def cli_run(database_url: str, tmp_path: Path) -> Run:
    env = dict(os.environ)
    env["TILLBOOK_DATABASE_URL"] = database_url
    env.pop("TILLBOOK_REDIS_URL", None)

    def run(*args: str, code: int = 0) -> Ran:
        result = run_cli(args, env=env, cwd=tmp_path)
        assert result.returncode == code, (args, result.stdout, result.stderr)
        assert "Traceback" not in result.stderr, result.stderr
        return Ran(result)

    return run
