"""Real servers the tests and the benchmark start as child processes: Debian's
PgBouncer in transaction pooling mode in front of the test PostgreSQL, and
PostgreSQL servers of their own (a primary made by ``initdb``, a streaming standby
made by ``pg_basebackup`` of it) in temporary directories on free ports.

Nothing here is a stand-in: the pooler is the packaged ``pgbouncer`` binary, so a
test that passes through it has met the same protocol a hosted deployment meets.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from sqlalchemy.engine import make_url

from tillbook.db import POOLER_PARAM

PGBOUNCER = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"
PG_BIN = Path("/usr/lib/postgresql/15/bin")


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


def _as_postgres(args: list[str]) -> list[str]:
    """``args`` run as the ``postgres`` user when this process is root (PostgreSQL
    refuses to run as root), as they are otherwise."""
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--", *args]
    return args


class PgServer:
    """A PostgreSQL 15 server of its own in a temporary directory, on a free loopback
    port, trusting local connections (replication ones too): a primary made by
    ``initdb`` (``init_primary``), or a hot standby streaming from one, made by
    ``pg_basebackup -R -X stream`` (``init_standby``). It shares nothing with the
    test server on 5432, whose configuration it leaves alone."""

    def __init__(self, name: str):
        self.root = Path(tempfile.mkdtemp(prefix=f"tillbook-{name}-"))
        os.chmod(self.root, 0o755)
        if os.geteuid() == 0:
            shutil.chown(self.root, "postgres", "postgres")
        self.data = self.root / "data"
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def _run(self, *args: str) -> None:
        done = subprocess.run(_as_postgres(list(args)), capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"{args[0]} failed: {done.stderr.strip() or done.stdout.strip()}")

    def init_primary(self) -> PgServer:
        self._run(str(PG_BIN / "initdb"), "-D", str(self.data), "-U", "postgres",
                  "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C.UTF-8")  # fmt: skip
        with (self.data / "pg_hba.conf").open("a") as hba:
            hba.write("\nhost replication all 127.0.0.1/32 trust\n")
        return self

    def init_standby(self, primary: PgServer) -> PgServer:
        self._run(str(PG_BIN / "pg_basebackup"), "-h", "127.0.0.1", "-p", str(primary.port),
                  "-U", "postgres", "-D", str(self.data), "-R", "-X", "stream",
                  "-c", "fast", "--no-sync")  # fmt: skip
        return self

    def start(self, **settings: str) -> PgServer:
        """Start (or start again) the server; ``settings`` are ``-c`` options."""
        self.port = self.port or free_port()
        options = {
            "listen_addresses": "127.0.0.1",
            "port": str(self.port),
            "unix_socket_directories": str(self.root),
            "max_connections": "100",
            "shared_buffers": "32MB",
            "max_wal_senders": "5",
            "hot_standby": "on",
            # the standby's feedback keeps the primary's vacuum from removing rows a
            # standby query still reads (a report cancelled mid-way otherwise)
            "hot_standby_feedback": "on",
            "logging_collector": "off",
            **settings,
        }
        args = [str(PG_BIN / "postgres"), "-D", str(self.data)]
        for name, value in options.items():
            args += ["-c", f"{name}={value}"]
        self.log = self.root / "server.log"
        if os.geteuid() == 0:
            self.log.touch()
            shutil.chown(self.log, "postgres", "postgres")
        with self.log.open("a") as log:
            self.process = subprocess.Popen(
                _as_postgres(args), stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        wait_for_port(self.port, self.process, f"postgres in {self.data}", 30)
        deadline = time.monotonic() + 30
        ready = [str(PG_BIN / "pg_isready"), "-q", "-h", "127.0.0.1", "-p", str(self.port)]
        while subprocess.run(ready).returncode != 0:  # listening, but still starting up
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise RuntimeError(f"postgres in {self.data} did not start; see {self.log}")
            time.sleep(0.05)
        return self

    def kill(self, sig: int = signal.SIGINT) -> None:
        """Stop the server: SIGINT is a fast shutdown, SIGKILL a crash (of the
        postmaster's whole process group, as when its machine dies)."""
        if self.process is not None and self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, sig)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self.process = None

    def stop(self) -> None:
        self.kill()
        shutil.rmtree(self.root, ignore_errors=True)
