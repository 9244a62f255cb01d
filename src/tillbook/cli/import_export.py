"""What every ``tillbook import`` command shares (DESIGN.md §13): reading the file
within its size limit, one unit of work, a progress bar on stderr while a large
file is written (only when stderr is a terminal), and the answer: the counts
(``--json``: ``{"created", "updated", "unchanged"}``), or every bad row as
``error: line N: column: why`` on stderr and exit code 1, nothing written.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import typer
from rich.console import Console
from rich.progress import Progress

from tillbook.cli.common import fail, out, print_json, run
from tillbook.db import Database
from tillbook.imports import Counts, ImportCounts, ImportRejected
from tillbook.imports.csvfile import Progress as ProgressFn
from tillbook.reports.common import check_scope
from tillbook.unit import UnitOfWork

# Rows written before a progress bar is worth drawing.
PROGRESS_FROM = 200

Importer = Callable[[UnitOfWork, bytes, ProgressFn | None], Awaitable[Counts]]


def read_file(path: Path, max_bytes: int) -> bytes:
    try:
        size = os.path.getsize(path)
        if size > max_bytes:
            fail(f"{path}: the file is {size} bytes, over the limit of {max_bytes}; split it")
        return path.read_bytes()
    except OSError as exc:
        fail(f"{path}: {exc.strerror or exc}")


def run_import(
    what: str, path: Path, company: int, json_: bool, importer: Importer, max_bytes: int
) -> None:
    """Import ``path`` for ``company`` with ``importer`` and print the answer."""
    data = read_file(path, max_bytes)
    console = Console(stderr=True)
    show = console.is_terminal and sys.stderr.isatty()

    async def work(db: Database) -> ImportCounts | ImportRejected:
        async def unit(uow: UnitOfWork) -> ImportCounts:
            await check_scope(uow.session, company)
            if not show:
                return (await importer(uow, data, None)).as_dict()
            with Progress(console=console, transient=True) as bar:
                task = bar.add_task(f"importing {what}", total=None)

                def step(done: int, total: int) -> None:
                    if total >= PROGRESS_FROM:
                        bar.update(task, completed=done, total=total)

                return (await importer(uow, data, step)).as_dict()

        try:
            return await db.unit(unit)
        except ImportRejected as exc:
            return exc

    result = run(work)
    if isinstance(result, ImportRejected):
        for line in result.lines():
            typer.echo(f"error: {line}", err=True)
        typer.echo(f"error: {result.message}", err=True)
        raise typer.Exit(1)
    if json_:
        print_json(result)
    else:
        out.print(
            f"{what.capitalize()}: {result['created']} created, {result['updated']} updated, "
            f"{result['unchanged']} unchanged"
        )
