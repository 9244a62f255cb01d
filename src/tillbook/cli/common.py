"""What every command shares: the database check and migration before it runs, one
unit of work against the database, ``--json`` printing, and the exit codes of
DESIGN.md §11 (a domain error is one line on stderr and exit code 1).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, Any, NoReturn, TypeVar

import typer
from rich.console import Console
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError, SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.config import Settings, get_settings, master_key_bytes
from tillbook.db import Database, async_url
from tillbook.errors import TillbookError, ValidationFailed

T = TypeVar("T")

out = Console(soft_wrap=True)
if not out.is_terminal:
    out.width = 160

JsonFlag = Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")]


def fail(message: str) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(1)


def every_problem(exc: Exception) -> Exception:
    """A 422's message names only its first field; on the command line say every
    one (``field: why; field: why``)."""
    if not isinstance(exc, ValidationFailed):
        return exc
    lines = [f"{field}: {msg}" for field, msgs in exc.errors.items() for msg in msgs]
    return ValidationFailed(exc.errors, "; ".join(lines))


def shown_url(url: str) -> str:
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:
        return "<unparseable URL>"


def prepare(settings: Settings) -> None:
    """Refuse a bad database URL or master key with a message, then migrate."""
    from tillbook.migrate import upgrade

    try:
        url = make_url(async_url(settings.database_url))
    except Exception as exc:
        fail(f"TILLBOOK_DATABASE_URL {shown_url(settings.database_url)!r}: {exc}")
    file: Path | None = None
    if url.get_backend_name() == "sqlite" and url.database not in (None, "", ":memory:"):
        file = Path(url.database).resolve()
        if not file.parent.is_dir():
            fail(f"TILLBOOK_DATABASE_URL: folder {file.parent} does not exist")
    try:
        master_key_bytes(settings)
    except Exception as exc:
        fail(f"TILLBOOK_MASTER_KEY: {exc}")
    # One line on stderr naming the database, so that a command run from the wrong
    # folder (a relative SQLite path) shows it, and a new file is not a silent surprise.
    new = file is not None and not file.exists()
    if not new:
        where = f" ({file})" if file is not None else ""
        typer.echo(f"tillbook: database {shown_url(settings.database_url)}{where}", err=True)
    try:
        upgrade(settings.database_url)
    except (SQLAlchemyError, OSError) as exc:
        fail(db_message(settings, exc))
    if new:
        typer.echo(
            f"tillbook: created a new empty database at {file} "
            f"({shown_url(settings.database_url)})",
            err=True,
        )


def db_message(settings: Settings, exc: BaseException) -> str:
    detail = exc.orig if isinstance(exc, DBAPIError) and exc.orig is not None else exc
    first = str(detail).strip().splitlines()[0] if str(detail).strip() else type(detail).__name__
    return f"cannot use the database {shown_url(settings.database_url)}: {first}"


def run(work: Callable[[Database], Awaitable[T]]) -> T:
    """Migrate, then run ``work`` against the configured database in one event loop."""
    settings = get_settings()
    prepare(settings)

    async def main() -> T:
        db = Database(settings.database_url, pool_size=2)
        try:
            return await work(db)
        finally:
            await db.dispose()

    try:
        return asyncio.run(main())
    except TillbookError as exc:
        fail(exc.message)
    except (SQLAlchemyError, OSError) as exc:
        fail(db_message(settings, exc))


def write(fn: Callable[[AsyncSession], Awaitable[T]]) -> T:
    """One write transaction, committed once."""
    return run(lambda db: db.write(fn))


def read(fn: Callable[[AsyncSession], Awaitable[T]]) -> T:
    return run(lambda db: db.read(fn))


def print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, indent=2, default=str) + "\n")
    sys.stdout.flush()


def parse_date(value: str | None, option: str) -> dt.date | None:
    if value is None:
        return None
    try:
        if len(value) != 10:
            raise ValueError
        return dt.date.fromisoformat(value)
    except ValueError:
        raise typer.BadParameter(f"expected YYYY-MM-DD, got {value!r}", param_hint=option) from None


def iso(moment: dt.datetime | dt.date | None) -> str | None:
    if isinstance(moment, dt.datetime) and moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)  # SQLite hands back naive UTC times
    return None if moment is None else moment.isoformat()
