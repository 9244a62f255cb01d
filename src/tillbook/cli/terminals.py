"""Payment terminal providers that call back, per warehouse."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.table import Table
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.cli.common import JsonFlag, out, print_json, read, write

terminals_app = typer.Typer(
    help="Payment terminal providers that call back (per warehouse).", no_args_is_help=True
)


def _provider_view(provider: Any, secret: str | None = None) -> dict[str, Any]:
    from tillbook.payments.terminal_callbacks import callback_path

    view: dict[str, Any] = {
        "id": provider.id,
        "name": provider.name,
        "warehouse_id": provider.warehouse_id,
        "payment_mode_id": provider.payment_mode_id,
        "callback_path": callback_path(provider),
    }
    if secret is not None:
        view["secret"] = secret
    else:
        view["active"] = provider.active
    return view


@terminals_app.command("add")
def terminals_add(
    warehouse: Annotated[int, typer.Option("--warehouse", help="Warehouse id.")],
    name: Annotated[str, typer.Option("--name", help="Provider name, unique per warehouse.")],
    payment_mode: Annotated[
        str, typer.Option("--payment-mode", help="Payment mode code (card) or id.")
    ],
    json_: JsonFlag = False,
) -> None:
    """Register a terminal provider; its callback path and secret are printed once."""
    from tillbook.payments import terminal_callbacks as terminals

    async def work(session: AsyncSession) -> dict[str, Any]:
        provider, secret = await terminals.add_provider(session, warehouse, name, payment_mode)
        return _provider_view(provider, secret)

    data = write(work)
    if json_:
        print_json(data)
        return
    out.print(f"Terminal provider {data['id']} {data['name']!r} for warehouse {warehouse}")
    out.print(f"  callback  POST {data['callback_path']}", highlight=False)
    out.print(f"  secret    {data['secret']}", highlight=False)
    out.print("Callbacks are signed: X-Service-Signature = hex HMAC-SHA256(secret, raw body).")


@terminals_app.command("list")
def terminals_list(
    warehouse: Annotated[int, typer.Option("--warehouse", help="Warehouse id.")],
    json_: JsonFlag = False,
) -> None:
    """List a warehouse's terminal providers (never their secrets)."""
    from tillbook.payments import terminal_callbacks as terminals

    async def work(session: AsyncSession) -> dict[str, Any]:
        providers = await terminals.list_providers(session, warehouse)
        return {"warehouse_id": warehouse, "providers": [_provider_view(p) for p in providers]}

    data = read(work)
    if json_:
        print_json(data)
        return
    table = Table("id", "name", "payment mode", "callback path", "active", box=None)
    for p in data["providers"]:
        table.add_row(
            str(p["id"]), p["name"], str(p["payment_mode_id"]), p["callback_path"],
            "yes" if p["active"] else "no",
        )  # fmt: skip
    out.print(table)
