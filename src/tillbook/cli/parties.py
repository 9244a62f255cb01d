"""Customers and suppliers from the command line: create, list, archive, and the
CSV import and export of DESIGN.md §13 (``tillbook import customers FILE``,
``tillbook export customers``).

An import with bad rows prints every one as ``error: line N: column: why`` on
stderr and exits 1, having written nothing. A progress bar is drawn on stderr while
a large file is written, only when stderr is a terminal.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError
from rich.table import Table
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.api.body import errors_of
from tillbook.cli.common import JsonFlag, out, print_json, read, run
from tillbook.cli.import_export import run_import
from tillbook.cli.reports import export_app
from tillbook.db import Database
from tillbook.imports import MAX_BYTES, Counts
from tillbook.imports.csvfile import Progress as ProgressFn
from tillbook.parties import import_export, service
from tillbook.parties.schemas import PartyIn
from tillbook.parties.service import AdminParty
from tillbook.reports.common import check_scope
from tillbook.unit import UnitOfWork

customer_app = typer.Typer(help="Customers of a company.", no_args_is_help=True)
supplier_app = typer.Typer(help="Suppliers of a company.", no_args_is_help=True)
import_app = typer.Typer(help="Import set-up records from CSV files.", no_args_is_help=True)

CompanyOpt = Annotated[int, typer.Option("--company", help="Company id.")]


def _body(values: dict[str, Any]) -> PartyIn:
    try:
        return PartyIn.model_validate({k: v for k, v in values.items() if v is not None})
    except ValidationError as exc:
        for field, messages in errors_of(exc).items():
            for message in messages:
                typer.echo(f"error: {field}: {message}", err=True)
        raise typer.Exit(1) from None


def _create(kind: str, company: int, values: dict[str, Any], json_: bool) -> None:
    body = _body(values)

    async def work(db: Database) -> AdminParty:
        async def unit(uow: UnitOfWork) -> AdminParty:
            await check_scope(uow.session, company)
            return await service.create(uow, company, kind, body, actor_id=None)

        return await db.unit(unit)

    data = run(work)
    if json_:
        print_json(data)
    else:
        code = f" ({data['code']})" if data["code"] else ""
        out.print(
            f"{kind.capitalize()} {data['id']} {data['name']!r}{code} created in company "
            f"{company}; balance {data['balance']}"
        )


def _list(kind: str, company: int, search: str | None, archived: bool, json_: bool) -> None:
    async def work(session: AsyncSession) -> list[AdminParty]:
        await check_scope(session, company)
        return await service.listing(
            session, company, kind, search=search or None, include_archived=archived
        )

    rows = read(work)
    if json_:
        print_json({"company_id": company, f"{kind}s": rows})
        return
    table = Table("id", "code", "name", "phone", "email", "balance", "archived")
    for p in rows:
        table.add_row(
            str(p["id"]),
            p["code"] or "-",
            p["name"],
            p["phone"] or "-",
            p["email"] or "-",
            p["balance"],
            "yes" if p["archived"] else "",
        )
    out.print(table)


def _archive(kind: str, company: int, party_id: int, json_: bool) -> None:
    async def work(session: AsyncSession) -> AdminParty:
        await check_scope(session, company)
        return await service.archive(
            session, company, kind, party_id, expected_version=None, actor_id=None
        )

    data = run(lambda db: db.write(work))
    if json_:
        print_json(data)
    else:
        out.print(f"{kind.capitalize()} {data['id']} {data['name']!r} archived")


def _commands(app: typer.Typer, kind: str) -> None:
    @app.command("create", help=f"Create a {kind} (with an opening balance, posted once).")
    def create(
        name: Annotated[str, typer.Argument(help="Name.")],
        company: CompanyOpt,
        code: Annotated[str | None, typer.Option("--code", help="Account code.")] = None,
        phone: Annotated[str | None, typer.Option("--phone")] = None,
        email: Annotated[str | None, typer.Option("--email")] = None,
        tax_number: Annotated[str | None, typer.Option("--tax-number")] = None,
        address: Annotated[str | None, typer.Option("--address")] = None,
        credit_limit: Annotated[
            str | None, typer.Option("--credit-limit", help="Customers only.")
        ] = None,
        opening_balance: Annotated[
            str | None,
            typer.Option(
                "--opening-balance", help="Owed on the day the books start (posted once)."
            ),
        ] = None,
        warehouse: Annotated[
            int | None,
            typer.Option("--warehouse", help="Where the opening balance is posted."),
        ] = None,
        json_: JsonFlag = False,
    ) -> None:
        values = {
            "name": name,
            "code": code,
            "phone": phone,
            "email": email,
            "tax_number": tax_number,
            "address": address,
            "credit_limit": credit_limit,
            "opening_balance": opening_balance,
            "warehouse_id": warehouse,
        }
        _create(kind, company, values, json_)

    @app.command("list", help=f"List the company's {kind}s with their balances.")
    def list_(
        company: CompanyOpt,
        search: Annotated[
            str | None, typer.Option("--search", help="Name, phone, email or code.")
        ] = None,
        include_archived: Annotated[bool, typer.Option("--include-archived")] = False,
        json_: JsonFlag = False,
    ) -> None:
        _list(kind, company, search, include_archived, json_)

    @app.command(
        "archive", help=f"Archive a {kind}: kept with its history, refused on new records."
    )
    def archive(
        party_id: Annotated[int, typer.Argument(help="Its id.")],
        company: CompanyOpt,
        json_: JsonFlag = False,
    ) -> None:
        _archive(kind, company, party_id, json_)


_commands(customer_app, "customer")
_commands(supplier_app, "supplier")


# ------------------------------------------------------------------ import and export


def _import(kind: str, path: Path, company: int, json_: bool) -> None:
    def importer(uow: UnitOfWork, data: bytes, progress: ProgressFn | None) -> Awaitable[Counts]:
        return import_export.import_parties(
            uow, company, kind, data, actor_id=None, progress=progress
        )

    run_import(f"{kind}s", path, company, json_, importer, MAX_BYTES)


def _export(kind: str, company: int) -> None:
    async def work(session: AsyncSession) -> import_export.Export:
        await check_scope(session, company)
        return await import_export.export_parties(session, company, kind)

    found = read(work)
    sys.stdout.write(found.csv)
    sys.stdout.flush()
    if found.skipped:
        typer.echo(
            f"note: {found.skipped} {kind}(s) without a code left out (rows are matched "
            "by code: give them one to export them)",
            err=True,
        )


FileArg = Annotated[
    Path, typer.Argument(help="CSV file: code,name,phone,email,tax_number,address,opening_balance")
]


@import_app.command("customers")
def import_customers(file: FileArg, company: CompanyOpt, json_: JsonFlag = False) -> None:
    """Create or update customers from a CSV file, all or nothing."""
    _import("customer", file, company, json_)


@import_app.command("suppliers")
def import_suppliers(file: FileArg, company: CompanyOpt, json_: JsonFlag = False) -> None:
    """Create or update suppliers from a CSV file, all or nothing."""
    _import("supplier", file, company, json_)


@export_app.command("customers")
def export_customers(company: CompanyOpt) -> None:
    """The company's customers as CSV on stdout (the import's columns)."""
    _export("customer", company)


@export_app.command("suppliers")
def export_suppliers(company: CompanyOpt) -> None:
    """The company's suppliers as CSV on stdout (the import's columns)."""
    _export("supplier", company)


__all__ = ["customer_app", "import_app", "supplier_app"]
