"""Real servers the tests and the benchmark start as child processes: Debian's
PgBouncer in transaction pooling mode in front of the test PostgreSQL.

Nothing here is a stand-in: the pooler is the packaged ``pgbouncer`` binary, so a
test that passes through it has met the same protocol a hosted deployment meets.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from sqlalchemy.engine import make_url

from tillbook.db import POOLER_PARAM

PGBOUNCER = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for_port(port: int, process: subprocess.Popen[bytes], what: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited with {process.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        time.sleep(0.05)
    raise RuntimeError(f"{what} did not listen on {port} within {timeout} s")


class PgBouncer:
    """``pgbouncer`` on a free loopback port, ``pool_mode = transaction``, in front
    of the PostgreSQL server of ``server_url`` (any database name: ``*``), trusting
    every user as the test server does. Started as root (CI), it drops to the
    ``postgres`` user, which PgBouncer requires; its files are then made readable."""

    def __init__(self, server_url: str, *, pool_size: int = 20):
        url = make_url(server_url)
        self.server_host = url.host or "127.0.0.1"
        self.server_port = url.port or 5432
        self.pool_size = pool_size
        self.port = 0
        self.dir = Path(tempfile.mkdtemp(prefix="tillbook-pgbouncer-"))
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> PgBouncer:
        if not Path(PGBOUNCER).exists():
            raise RuntimeError("pgbouncer is not installed (apt-get install pgbouncer)")
        self.port = free_port()
        users = self.dir / "users.txt"
        users.write_text('"postgres" ""\n')
        ini = self.dir / "pgbouncer.ini"
        ini.write_text(
            "[databases]\n"
            f"* = host={self.server_host} port={self.server_port}\n"
            "[pgbouncer]\n"
            "listen_addr = 127.0.0.1\n"
            f"listen_port = {self.port}\n"
            "unix_socket_dir =\n"
            "auth_type = trust\n"
            f"auth_file = {users}\n"
            "pool_mode = transaction\n"
            "max_client_conn = 2000\n"
            f"default_pool_size = {self.pool_size}\n"
            # asyncpg sends it at login; PgBouncer refuses unknown startup parameters.
            "ignore_startup_parameters = extra_float_digits\n"
            "server_check_delay = 0\n"
            f"logfile = {self.dir / 'pgbouncer.log'}\n"
            "log_connections = 0\n"
            "log_disconnections = 0\n"
        )
        args = [PGBOUNCER, str(ini)]
        if os.geteuid() == 0:
            args[1:1] = ["-u", "postgres"]
            os.chmod(self.dir, 0o777)
            for path in (users, ini):
                os.chmod(path, 0o644)
        self.process = subprocess.Popen(
            args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
        )
        wait_for_port(self.port, self.process, "pgbouncer", 10)
        return self

    def url(self, database: str, user: str = "postgres") -> str:
        """The URL of ``database`` through this pooler, marked for the service."""
        return f"postgresql://{user}@127.0.0.1:{self.port}/{database}?{POOLER_PARAM}=pgbouncer"

    def through(self, direct_url: str) -> str:
        """``direct_url``'s database and user, through this pooler."""
        url = make_url(direct_url)
        return self.url(url.database or "postgres", url.username or "postgres")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None
        shutil.rmtree(self.dir, ignore_errors=True)
