"""A live ``tillbook serve`` in its own process on the test database, and the
system's Chromium to drive it: shared by every browser test (the back office, the
week of a shop, the register). A test module using ``server`` is skipped, with the
reason, only when no Chromium executable is found (``apt-get install -y chromium``;
Playwright's own browser downloads are not used)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

CHROMIUM = next(
    (
        p
        for p in (
            os.environ.get("TILLBOOK_CHROMIUM"),
            shutil.which("chromium"),
            shutil.which("chromium-browser"),
        )
        if p
    ),
    None,
)
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="no Chromium executable (apt-get install -y chromium)"
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def server(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = _free_port()
    workdir = tmp_path_factory.mktemp("serve")
    env = dict(os.environ, TILLBOOK_DATABASE_URL=database_url)
    env.pop("TILLBOOK_REDIS_URL", None)
    log = (workdir / "serve.log").open("w")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tillbook.cli",
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--no-worker",
        ],
        env=env,
        cwd=workdir,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, (workdir / "serve.log").read_text()
            try:
                httpx.get(f"{base}/health")
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "tillbook serve did not start"
                time.sleep(0.2)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


@pytest.fixture
async def pw() -> AsyncIterator[Any]:
    """Playwright, for a test that launches its own browsers (the register's)."""
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        yield p
