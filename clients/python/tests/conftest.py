"""A live ``tillbook serve`` for the client's tests: its own process on a free
port, a fresh SQLite database in a temporary folder, demo data from
``tillbook demo --json``. Needs the service installed beside the client (the
repository's install line does both)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tillbook_client import Client, RetryPolicy

ROOT = Path(__file__).resolve().parents[3]
if (ROOT / "tests" / "invariants.py").exists() and str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # tests.invariants: the books' checks

MASTER_KEY = "Y2xpZW50LXRlc3QtbWFzdGVyLWtleS0zMi1ieXRlcyE="
CLI = [sys.executable, "-m", "tillbook.cli"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class Server:
    """``tillbook serve`` that can be stopped and started again on the same port
    and database (a till's view of an outage)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = free_port()
        self.database_url = f"sqlite:///{folder / 'tillbook.db'}"
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["TILLBOOK_DATABASE_URL"] = self.database_url
        env["TILLBOOK_MASTER_KEY"] = MASTER_KEY
        env["TILLBOOK_MASTER_KEY_FILE"] = str(self.folder / "master-key")
        return env

    def cli(self, *args: str) -> Any:
        done = subprocess.run(
            [*CLI, *args], env=self.env(), cwd=self.folder, capture_output=True, check=True
        )
        return json.loads(done.stdout)

    def start(self) -> None:
        log = (self.folder / "serve.log").open("ab")
        self.proc = subprocess.Popen(
            [*CLI, "serve", "--host", "127.0.0.1", "--port", str(self.port), "--no-worker"],
            env=self.env(),
            cwd=self.folder,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 60
        while True:
            assert self.proc.poll() is None, (self.folder / "serve.log").read_text()
            try:
                if httpx.get(f"{self.url}/ready").status_code == 200:
                    return
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "tillbook serve did not start"
            time.sleep(0.2)

    def stop(self) -> None:
        if self.proc is None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(tmp_path_factory.mktemp("serve"))
    srv.demo = srv.cli("demo", "--json")  # type: ignore[attr-defined]
    srv.start()
    yield srv
    srv.stop()


@pytest.fixture(scope="session")
def demo(server: Server) -> dict[str, Any]:
    company: dict[str, Any] = server.demo["companies"][0]  # type: ignore[attr-defined]
    return company


@pytest.fixture(scope="session")
def key(demo: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = demo["warehouses"][0]["keys"][0]
    return found


FAST = RetryPolicy(max_attempts=3, base=0.05, cap=0.2, max_wait=2)


@pytest.fixture
def client(server: Server, key: dict[str, Any]) -> Iterator[Client]:
    with Client(
        server.url, key["public_key"], key["secret_key"], hmac_secret=key["hmac_secret"], retry=FAST
    ) as c:
        yield c


def books_balanced(server: Server, company_id: int) -> None:
    """tests/invariants.py's check of the books, on the server's database."""
    import asyncio

    from tests.invariants import check_books  # type: ignore[import-not-found,unused-ignore]
    from tillbook.db import Database

    async def run() -> None:
        db = Database(server.database_url)
        try:
            await check_books(db, company_id)
        finally:
            await db.dispose()

    asyncio.run(run())
