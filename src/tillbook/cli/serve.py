"""Long-running processes and the schema: serve, worker, migrate."""

from __future__ import annotations

import asyncio
import os
import signal
from typing import Annotated

import typer

from tillbook.cli.common import out, prepare, shown_url
from tillbook.config import get_settings
from tillbook.db import Database


def serve(
    host: Annotated[str, typer.Option(help="Interface to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port.")] = 8000,
    workers: Annotated[int, typer.Option(min=1, help="Worker processes.")] = 1,
    no_worker: Annotated[
        bool, typer.Option("--no-worker", help="Do not run the webhook worker inside.")
    ] = False,
    forwarded_allow_ips: Annotated[
        str | None,
        typer.Option(
            help="Proxies whose X-Forwarded-For names the client (comma-separated IPs or "
            "networks, * for any); default $FORWARDED_ALLOW_IPS or 127.0.0.1."
        ),
    ] = None,
) -> None:
    """Migrate, then serve the API (uvicorn) on HOST:PORT.

    No ``Server`` header (it would name uvicorn and nothing useful); the ``Date``
    header stays. The client address (admin login limits) is the peer's, or the
    X-Forwarded-For of a proxy in ``--forwarded-allow-ips``."""
    import uvicorn

    os.environ["TILLBOOK_RUN_WORKER"] = "false" if no_worker else "true"
    os.environ["TILLBOOK_RUN_ROLLUPS"] = "true"
    os.environ["TILLBOOK_SETTLE_HEAP"] = "true"
    get_settings.cache_clear()
    settings = get_settings()
    prepare(settings)
    uvicorn.run(
        "tillbook.app:create_app",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level=settings.log_level.lower(),
        server_header=False,
        forwarded_allow_ips=forwarded_allow_ips,
    )


def worker() -> None:
    """Run the webhook delivery worker alone (no API), until interrupted."""
    from tillbook.events.worker import DeliveryWorker

    settings = get_settings()
    prepare(settings)

    async def main() -> None:
        db = Database(settings.database_url)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        try:
            await DeliveryWorker(db, settings).run_forever(stop)
        finally:
            await db.dispose()

    asyncio.run(main())


def migrate() -> None:
    """Apply database migrations (every other command does this first too)."""
    from alembic.script import ScriptDirectory

    from tillbook.migrate import alembic_config

    settings = get_settings()
    prepare(settings)
    head = ScriptDirectory.from_config(alembic_config(settings.database_url)).get_current_head()
    out.print(f"{shown_url(settings.database_url)} is at revision {head}")


def citus_script() -> None:
    """Print the SQL that distributes a migrated database on Citus by tenant
    (DESIGN §17), generated from the models' one list of tenant, reference and
    coordinator tables. Reads no database."""
    from tillbook.models import Base
    from tillbook.models.distribution import citus_script as script

    typer.echo(script(Base.metadata), nl=False)
