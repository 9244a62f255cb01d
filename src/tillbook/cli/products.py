"""The company's catalog from the command line: ``tillbook product create|list|archive``
and ``tillbook import|export products`` (DESIGN.md §13).

The same service and checks as the back office (``catalog.products``): options are
turned into the admin API's body and parsed by the same code, so a bad value gets
the same message naming the field.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.cli.common import JsonFlag, out, print_json, read, run
from tillbook.cli.import_export import run_import
from tillbook.cli.parties import import_app
from tillbook.cli.reports import export_app
from tillbook.db import Database
from tillbook.imports import Counts
from tillbook.imports.csvfile import Progress as ProgressFn
from tillbook.kit.jsonio import dumps
from tillbook.kit.pagination import MAX_LIMIT, Page
from tillbook.reports.common import check_scope
from tillbook.unit import UnitOfWork

# The catalog service and the request parser (FastAPI's, a fifth of a second to
# import) are imported by the commands that use them, not by every command.

product_app = typer.Typer(help="Products of a company's catalog.", no_args_is_help=True)

CompanyOpt = Annotated[int, typer.Option("--company", help="Company id.")]


@product_app.command("create")
def product_create(
    company: CompanyOpt,
    name: Annotated[str, typer.Option("--name", help="Product name.")],
    item_code: Annotated[str, typer.Option("--item-code", help="SKU, unique in the company.")],
    warehouse: Annotated[
        list[int] | None,
        typer.Option("--warehouse", help="List it in this warehouse (repeat for several)."),
    ] = None,
    price: Annotated[str | None, typer.Option("--price", help="Sales price.")] = None,
    cost: Annotated[str | None, typer.Option("--cost", help="Purchase price.")] = None,
    mrp: Annotated[str | None, typer.Option("--mrp", help="Maximum retail price.")] = None,
    opening_stock: Annotated[
        str | None,
        typer.Option("--opening-stock", help="Stock on hand in each warehouse, at --cost."),
    ] = None,
    barcode: Annotated[
        list[str] | None, typer.Option("--barcode", help="A barcode (repeat for several).")
    ] = None,
    category_id: Annotated[int | None, typer.Option("--category-id")] = None,
    brand_id: Annotated[int | None, typer.Option("--brand-id")] = None,
    unit_id: Annotated[int | None, typer.Option("--unit-id")] = None,
    tax_id: Annotated[int | None, typer.Option("--tax-id")] = None,
    json_: JsonFlag = False,
) -> None:
    """Define a product and list it in warehouses, with opening stock if given."""
    listings: list[dict[str, Any]] = []
    for wh in warehouse or []:
        listing: dict[str, Any] = {
            "warehouse_id": wh,
            "sales_price": price if price is not None else "0",
            "purchase_price": cost if cost is not None else "0",
            "mrp": mrp,
        }
        if opening_stock is not None and Decimal(opening_stock or "0") != 0:
            listing["opening_stock"] = {
                "quantity": opening_stock,
                "unit_cost": cost if cost is not None else "0",
            }
        listings.append(listing)
    raw = dumps(
        {
            "name": name,
            "item_code": item_code,
            "barcodes": barcode or [],
            "category_id": category_id,
            "brand_id": brand_id,
            "unit_id": unit_id,
            "tax_id": tax_id,
            "listings": listings,
        }
    )

    from tillbook.api.body import parse_bytes
    from tillbook.catalog import products as service
    from tillbook.catalog.schemas import ProductIn

    async def work(db: Database) -> dict[str, Any]:
        body = parse_bytes(raw, ProductIn)

        async def create(uow: UnitOfWork) -> dict[str, Any]:
            await check_scope(uow.session, company)
            return dict(await service.create(uow, company, body, actor_id=None))

        result: dict[str, Any] = await db.unit(create)
        return result

    data = run(work)
    if json_:
        print_json(data)
    else:
        where = ", ".join(str(li["warehouse_id"]) for li in data["listings"]) or "no warehouse"
        out.print(f"Product {data['id']} {data['item_code']} {data['name']!r} listed in {where}")


@product_app.command("list")
def product_list(
    company: CompanyOpt,
    warehouse: Annotated[int | None, typer.Option("--warehouse", help="Only listed here.")] = None,
    search: Annotated[str | None, typer.Option("--search", help="Name, code or barcode.")] = None,
    archived: Annotated[bool, typer.Option("--archived", help="Include archived.")] = False,
    page: Annotated[int, typer.Option("--page", min=1)] = 1,
    limit: Annotated[int, typer.Option("--limit", min=1, max=MAX_LIMIT)] = MAX_LIMIT,
    json_: JsonFlag = False,
) -> None:
    """The company's products with their listings."""
    from tillbook.catalog import products as service

    async def work(session: AsyncSession) -> dict[str, Any]:
        await check_scope(session, company, warehouse)
        return dict(
            await service.page(
                session,
                company,
                Page(page=page, limit=limit),
                search=search,
                warehouse_id=warehouse,
                include_archived=archived,
            )
        )

    data = read(work)
    if json_:
        print_json(data)
        return
    table = Table("id", "item code", "name", "warehouse", "price", "stock", "state")
    for p in data["data"]:
        state = "archived" if p["archived"] else "active"
        for li in p["listings"] or [{}]:
            table.add_row(
                str(p["id"]),
                p["item_code"],
                p["name"],
                str(li.get("warehouse_id", "-")),
                str(li.get("sales_price", "-")),
                str(li.get("current_stock", "-")),
                state if li.get("active", True) else "inactive here",
            )
    out.print(table)
    out.print(f"page {data['current_page']} of {data['last_page']} ({data['total']} products)")


@product_app.command("archive")
def product_archive(
    company: CompanyOpt,
    product_id: Annotated[int, typer.Option("--id", help="Product id.")],
    json_: JsonFlag = False,
) -> None:
    """Archive a product: no longer sold or bought; its history stays."""
    from tillbook.catalog import products as service

    async def work(db: Database) -> dict[str, Any]:
        async def archive(uow: UnitOfWork) -> dict[str, Any]:
            await check_scope(uow.session, company)
            return dict(await service.archive(uow, company, product_id, actor_id=None))

        result: dict[str, Any] = await db.unit(archive)
        return result

    data = run(work)
    if json_:
        print_json(data)
    else:
        out.print(f"Product {data['id']} {data['item_code']} archived")


ProductFile = Annotated[
    Path,
    typer.Argument(
        help="CSV file: item_code,name,barcode,category,brand,unit,tax,sales_price,"
        "purchase_price,mrp,warehouse,opening_stock,opening_cost,reorder_level"
    ),
]


@import_app.command("products")
def import_products(file: ProductFile, company: CompanyOpt, json_: JsonFlag = False) -> None:
    """Create or update products and their listings from a CSV file, all or nothing."""
    from tillbook.catalog import import_export

    def importer(uow: UnitOfWork, data: bytes, progress: ProgressFn | None) -> Awaitable[Counts]:
        return import_export.import_products(uow, company, data, actor_id=None, progress=progress)

    run_import("products", file, company, json_, importer, import_export.MAX_BYTES)


@export_app.command("products")
def export_products(company: CompanyOpt) -> None:
    """The company's products as CSV on stdout (the import's columns, a row per
    listing, the stock on hand as opening stock)."""
    from tillbook.catalog import import_export

    async def work(session: AsyncSession) -> str:
        await check_scope(session, company)
        return await import_export.export_products(session, company)

    sys.stdout.write(read(work))
    sys.stdout.flush()
