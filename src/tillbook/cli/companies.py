"""Companies (tenants) and their warehouses (branches)."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.table import Table
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.cli.common import JsonFlag, iso, out, parse_date, print_json, read, write
from tillbook.errors import invalid
from tillbook.kit import xid
from tillbook.models import Company, Warehouse
from tillbook.reports.common import check_scope
from tillbook.tenancy import service as tenancy

company_app = typer.Typer(help="Companies (tenants).", no_args_is_help=True)
warehouse_app = typer.Typer(help="Warehouses (branches) of a company.", no_args_is_help=True)


@company_app.command("create")
def company_create(
    name: Annotated[str, typer.Argument(help="Company name.")],
    admin_email: Annotated[str, typer.Option("--admin-email", help="Administrator e-mail.")],
    admin_password: Annotated[
        str, typer.Option("--admin-password", help="Administrator password (8+ characters).")
    ],
    base_currency: Annotated[
        str,
        typer.Option(
            "--base-currency",
            help="ISO 4217 code the books are kept in; fixed once anything is posted.",
        ),
    ] = "USD",
    json_: JsonFlag = False,
) -> None:
    """Create a company with its chart of accounts, admin, Cash, Card and Bank modes."""

    async def work(session: AsyncSession) -> dict[str, Any]:
        company, admin = await tenancy.create_company(
            session,
            name,
            admin_email=admin_email,
            admin_password=admin_password,
            base_currency=base_currency,
        )
        return {
            "id": company.id,
            "name": company.name,
            "admin_email": admin.email,
            "base_currency": company.base_currency,
        }

    data = write(work)
    if json_:
        print_json(data)
    else:
        out.print(
            f"Company {data['id']} {data['name']!r} created; admin {data['admin_email']}; "
            f"books in {data['base_currency']}"
        )


@company_app.command("subscription")
def company_subscription(
    company_id: Annotated[int, typer.Argument(help="Company id.")],
    expires: Annotated[
        str, typer.Option("--expires", help="Last valid day, YYYY-MM-DD, or 'never'.")
    ],
    json_: JsonFlag = False,
) -> None:
    """Set the last day the company's subscription is valid (API calls get 403 after)."""
    day = None if expires.lower() == "never" else parse_date(expires, "--expires")

    async def work(session: AsyncSession) -> dict[str, Any]:
        company = await check_scope(session, company_id)
        company.subscription_expires_on = day
        await session.flush()
        return {"id": company.id, "name": company.name, "subscription_expires_on": iso(day)}

    data = write(work)
    if json_:
        print_json(data)
    else:
        until = data["subscription_expires_on"] or "no expiry"
        out.print(f"Company {data['id']} {data['name']!r}: subscription valid until {until}")


@company_app.command("list")
def company_list(json_: JsonFlag = False) -> None:
    """List companies and their warehouses."""

    async def work(session: AsyncSession) -> dict[str, Any]:
        companies = (await session.execute(select(Company).order_by(Company.id))).scalars().all()
        warehouses = (await session.execute(select(Warehouse).order_by(Warehouse.id))).scalars()
        by_company: dict[int, list[dict[str, Any]]] = {}
        for wh in warehouses:
            by_company.setdefault(wh.company_id, []).append({"id": wh.id, "name": wh.name})
        return {
            "companies": [
                {
                    "id": c.id,
                    "name": c.name,
                    "subscription_expires_on": iso(c.subscription_expires_on),
                    "warehouses": by_company.get(c.id, []),
                }
                for c in companies
            ]
        }

    data = read(work)
    if json_:
        print_json(data)
        return
    table = Table("id", "name", "subscription", "warehouses")
    for c in data["companies"]:
        whs = ", ".join(f"{w['id']} {w['name']}" for w in c["warehouses"])
        table.add_row(str(c["id"]), c["name"], c["subscription_expires_on"] or "-", whs)
    out.print(table)


# ---------------------------------------------------------------- warehouses


@warehouse_app.command("create")
def warehouse_create(
    company_id: Annotated[int, typer.Argument(help="Company id.")],
    name: Annotated[str, typer.Argument(help="Warehouse name.")],
    allow_negative_stock: Annotated[
        bool,
        typer.Option("--allow-negative-stock", help="Let sales take stock below zero."),
    ] = False,
    json_: JsonFlag = False,
) -> None:
    """Create a warehouse (branch) of a company."""

    async def work(session: AsyncSession) -> dict[str, Any]:
        if not name.strip():
            raise invalid("name", "must not be empty")
        wh = await tenancy.create_warehouse(
            session, company_id, name.strip(), allow_negative_stock=allow_negative_stock
        )
        return {
            "id": wh.id,
            "xid": xid.encode(wh.id),
            "company_id": wh.company_id,
            "name": wh.name,
            "allow_negative_stock": wh.allow_negative_stock,
        }

    data = write(work)
    if json_:
        print_json(data)
    else:
        out.print(
            f"Warehouse {data['id']} (xid {data['xid']}) {data['name']!r} created in company "
            f"{data['company_id']}; negative stock "
            f"{'allowed' if data['allow_negative_stock'] else 'refused'}"
        )
