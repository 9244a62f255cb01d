"""The operator command line as separate processes that start in milliseconds.

``python -m tillbook.cli`` imports the whole service before it reads its arguments:
2-3 s of every call on a slow VM, and the suite makes a few hundred calls. Here one
process per test process (a zygote) imports ``tillbook.cli`` once, opening no
database and starting no thread, and forks a child for each call. The child is what
``python -m tillbook.cli ARGS`` would be: its own argv, environment, working folder,
stdin, stdout and stderr (files, read back here), ``tillbook.cli.__main__`` run by
``runpy``, atexit handlers run, and its own exit status, which ``run_cli`` returns as
``subprocess.run`` would. Commands that run until stopped (``serve``, ``worker``) are
still started with ``subprocess.Popen`` by the tests that stop them.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

CLI = [sys.executable, "-m", "tillbook.cli"]

_lock = threading.Lock()
_zygote: subprocess.Popen[bytes] | None = None
_pending = b""


def run_cli(
    args: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
    input: str | None = None,
    timeout: float | None = 120,
    check: bool = False,
) -> subprocess.CompletedProcess[str]:
    """``subprocess.run([*CLI, *args], capture_output=True, text=True, ...)``, with
    stdin from ``input`` (or empty, as ``stdin=DEVNULL``), through the zygote."""
    with _lock, tempfile.TemporaryDirectory(prefix="tillbook-cli-") as folder:
        files = {name: os.path.join(folder, name) for name in ("stdin", "stdout", "stderr")}
        Path(files["stdin"]).write_text(input or "", encoding="utf-8")
        request = {
            "argv": [CLI[-1], *args],
            "env": dict(os.environ if env is None else env),
            "cwd": str(cwd if cwd is not None else os.getcwd()),
            **files,
        }
        zygote = _started()
        assert zygote.stdin is not None
        zygote.stdin.write(json.dumps(request).encode() + b"\n")
        zygote.stdin.flush()
        pid = int(_reply(None)["pid"])
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            code = int(_reply(deadline)["code"])
        except TimeoutError:
            os.kill(pid, signal.SIGKILL)
            _reply(None)
            raise subprocess.TimeoutExpired([*CLI, *args], timeout or 0) from None
        out = Path(files["stdout"]).read_text(encoding="utf-8")
        err = Path(files["stderr"]).read_text(encoding="utf-8", errors="backslashreplace")
    done = subprocess.CompletedProcess([*CLI, *args], code, out, err)
    if check:
        done.check_returncode()
    return done


def _started() -> subprocess.Popen[bytes]:
    global _zygote, _pending
    if _zygote is None or _zygote.poll() is not None:
        _pending = b""
        _zygote = subprocess.Popen(
            [sys.executable, __file__],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            bufsize=0,
        )
    return _zygote


def _reply(deadline: float | None) -> dict[str, Any]:
    """The zygote's next line; ``TimeoutError`` when ``deadline`` passes first."""
    global _pending
    assert _zygote is not None and _zygote.stdout is not None
    fd = _zygote.stdout.fileno()
    while b"\n" not in _pending:
        wait = None if deadline is None else max(0.0, deadline - time.monotonic())
        ready, _, _ = select.select([fd], [], [], wait)
        if not ready:
            raise TimeoutError
        chunk = os.read(fd, 65536)
        if not chunk:
            raise RuntimeError("the CLI's zygote process ended")
        _pending += chunk
    line, _pending = _pending.split(b"\n", 1)
    answer: dict[str, Any] = json.loads(line)
    return answer


# ------------------------------------------------------------------ the zygote


def _serve() -> None:
    import tillbook.cli  # noqa: F401  (the import every child shares)

    out = os.fdopen(os.dup(1), "w", buffering=1)
    for line in sys.stdin:
        request = json.loads(line)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _child(request)
        out.write(json.dumps({"pid": pid}) + "\n")
        _, status = os.waitpid(pid, 0)
        out.write(json.dumps({"code": os.waitstatus_to_exitcode(status)}) + "\n")


def _child(request: dict[str, Any]) -> None:
    """Become ``python -m tillbook.cli ARGV``; never returns."""
    import atexit
    import runpy
    import traceback

    code = 1
    try:
        os.chdir(request["cwd"])
        sys.path[0] = os.getcwd()  # as ``python -m`` sets it
        os.environ.clear()
        os.environ.update(request["env"])
        for fd, name, flags in (
            (0, "stdin", os.O_RDONLY),
            (1, "stdout", os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
            (2, "stderr", os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
        ):
            opened = os.open(request[name], flags)
            os.dup2(opened, fd)
            os.close(opened)
        sys.stdin = sys.__stdin__ = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stdout = sys.__stdout__ = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stderr = sys.__stderr__ = open(  # noqa: SIM115
            2, "w", encoding="utf-8", errors="backslashreplace", buffering=1, closefd=False
        )
        sys.argv = list(request["argv"])
        try:
            runpy.run_module("tillbook.cli", run_name="__main__", alter_sys=True)
            code = 0
        except SystemExit as exc:
            if exc.code is None:
                code = 0
            elif isinstance(exc.code, int):
                code = exc.code
            else:
                print(exc.code, file=sys.stderr)
                code = 1
        except BaseException:
            traceback.print_exc()
            code = 1
        atexit._run_exitfuncs()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


if __name__ == "__main__":
    _serve()
