"""Webhook endpoints and their deliveries."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.table import Table
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.auth.actor import COMMAND_LINE
from tillbook.cli.common import JsonFlag, every_problem, out, print_json, read, run, write
from tillbook.config import get_settings
from tillbook.db import Database
from tillbook.errors import TillbookError
from tillbook.reports.common import check_scope

webhooks_app = typer.Typer(help="Webhook endpoints and their deliveries.", no_args_is_help=True)

WebhookCompany = Annotated[int, typer.Option("--company", help="Company id.")]
WebhookId = Annotated[int, typer.Argument(help="Webhook id.")]


def _event_names(events: str | None) -> list[str] | None:
    """``a,b`` -> ["a", "b"]; omitted, empty or ``*`` -> every event."""
    if events is None:
        return None
    names = [name.strip() for name in events.split(",") if name.strip()]
    return names or None


def _webhook_secret_view(data: dict[str, Any]) -> dict[str, Any]:
    return {key: data[key] for key in ("id", "url", "events", "secret")}


def _print_webhook(data: dict[str, Any], what: str) -> None:
    state = "active" if data.get("active", True) else "disabled"
    out.print(f"Webhook {data['id']} {what}: {data['url']} ({', '.join(data['events'])}; {state})")


@webhooks_app.command("add")
def webhooks_add(
    company: WebhookCompany,
    url: Annotated[str, typer.Option("--url", help="https URL to POST events to.")],
    events: Annotated[
        str | None,
        typer.Option("--events", help="Comma-separated event types; every event when omitted."),
    ] = None,
    json_: JsonFlag = False,
) -> None:
    """Register a webhook endpoint; its signing secret is printed once.

    The URL must pass the address policy (docs/integrators/webhooks.md); a refused
    one exits 1."""
    from tillbook.api.admin.webhooks import webhook_view
    from tillbook.events import webhook_service as service
    from tillbook.events.urlpolicy import UrlPolicy

    async def work(db: Database) -> dict[str, Any]:
        await db.read(lambda s: check_scope(s, company))
        try:
            new = await service.check_new_webhook(
                url, _event_names(events), UrlPolicy.from_settings(get_settings())
            )
        except TillbookError as exc:
            raise every_problem(exc) from None
        webhook, secret = await db.write(
            lambda s: service.add_webhook(s, company, new, actor=COMMAND_LINE)
        )
        return webhook_view(webhook, secret)

    data = run(work)
    if json_:
        print_json(_webhook_secret_view(data))
        return
    _print_webhook(data, "added")
    out.print(f"  secret  {data['secret']}", highlight=False)
    out.print("The secret is shown once (`tillbook webhooks rotate` issues a new one).")


@webhooks_app.command("list")
def webhooks_list(company: WebhookCompany, json_: JsonFlag = False) -> None:
    """List a company's webhooks (never their secrets)."""
    from tillbook.api.admin.webhooks import webhook_view
    from tillbook.events import webhook_service as service

    async def work(session: AsyncSession) -> dict[str, Any]:
        await check_scope(session, company)
        hooks = await service.list_webhooks(session, company)
        return {"company_id": company, "webhooks": [webhook_view(w) for w in hooks]}

    data = read(work)
    if json_:
        print_json(data)
        return
    table = Table("id", "url", "events", "active", "created", box=None)
    for w in data["webhooks"]:
        table.add_row(
            str(w["id"]), w["url"], ",".join(w["events"]), "yes" if w["active"] else "no",
            w["created_at"],
        )  # fmt: skip
    out.print(table)


def _set_webhook(company: int, webhook_id: int, active: bool, json_: bool) -> None:
    from tillbook.api.admin.webhooks import webhook_view
    from tillbook.events import webhook_service as service

    async def work(session: AsyncSession) -> dict[str, Any]:
        changed = await service.set_active(session, company, webhook_id, active, actor=COMMAND_LINE)
        return webhook_view(changed)

    data = write(work)
    if json_:
        print_json(data)
    else:
        _print_webhook(data, "enabled" if active else "disabled")


@webhooks_app.command("disable")
def webhooks_disable(
    webhook_id: WebhookId, company: WebhookCompany, json_: JsonFlag = False
) -> None:
    """Stop sending to a webhook; its deliveries wait until it is enabled again."""
    _set_webhook(company, webhook_id, False, json_)


@webhooks_app.command("enable")
def webhooks_enable(
    webhook_id: WebhookId, company: WebhookCompany, json_: JsonFlag = False
) -> None:
    """Send to a disabled webhook again."""
    _set_webhook(company, webhook_id, True, json_)


@webhooks_app.command("remove")
def webhooks_remove(
    webhook_id: WebhookId, company: WebhookCompany, json_: JsonFlag = False
) -> None:
    """Delete a webhook with its deliveries and their attempts."""
    from tillbook.events import webhook_service as service

    async def work(session: AsyncSession) -> dict[str, Any]:
        await service.remove_webhook(session, company, webhook_id, actor=COMMAND_LINE)
        return {"id": webhook_id, "removed": True}

    data = write(work)
    if json_:
        print_json(data)
    else:
        out.print(f"Webhook {webhook_id} removed")


@webhooks_app.command("rotate")
def webhooks_rotate(
    webhook_id: WebhookId, company: WebhookCompany, json_: JsonFlag = False
) -> None:
    """Issue a new signing secret (printed once); the old one stops working at once."""
    from tillbook.api.admin.webhooks import webhook_view
    from tillbook.events import webhook_service as service

    async def work(session: AsyncSession) -> dict[str, Any]:
        webhook, secret = await service.rotate_secret(
            session, company, webhook_id, actor=COMMAND_LINE
        )
        return webhook_view(webhook, secret)

    data = write(work)
    if json_:
        print_json(_webhook_secret_view(data))
        return
    _print_webhook(data, "has a new secret")
    out.print(f"  secret  {data['secret']}", highlight=False)


@webhooks_app.command("deliveries")
def webhooks_deliveries(
    company: WebhookCompany,
    status: Annotated[
        str | None,
        typer.Option("--status", help="pending, delivering, retrying, delivered or dead."),
    ] = None,
    webhook: Annotated[int | None, typer.Option("--webhook", help="One webhook's only.")] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, max=1000, help="Newest N.")] = 100,
    json_: JsonFlag = False,
) -> None:
    """List a company's deliveries, newest first."""
    from tillbook.api.admin.webhooks import delivery_view
    from tillbook.events import webhook_service as service

    async def work(session: AsyncSession) -> dict[str, Any]:
        await check_scope(session, company)
        if webhook is not None:
            await service.get_webhook(session, company, webhook)
        rows = await service.list_deliveries(
            session, company, status, webhook_id=webhook, limit=limit
        )
        events = await service.event_refs(session, rows)
        return {"company_id": company, "deliveries": [delivery_view(d, events) for d in rows]}

    data = read(work)
    if json_:
        print_json(data)
        return
    table = Table("id", "webhook", "event", "status", "attempts", "last", "next attempt", box=None)
    for d in data["deliveries"]:
        last = str(d["last_status_code"] or d["last_error"] or "-")[:40]
        table.add_row(
            str(d["id"]), str(d["webhook_id"]), f"{d['event_type']} {d['event_id']}",
            d["status"], str(d["attempts"]), last, d["next_attempt_at"],
        )  # fmt: skip
    out.print(table)


@webhooks_app.command("redeliver")
def webhooks_redeliver(
    delivery_id: Annotated[int, typer.Argument(help="Delivery id (from `deliveries`).")],
    company: WebhookCompany,
    json_: JsonFlag = False,
) -> None:
    """Queue a delivery again now, whatever its state (a dead one gets a fresh 24 h)."""
    from tillbook.api.admin.webhooks import delivery_view
    from tillbook.events import webhook_service as service

    async def work(session: AsyncSession) -> dict[str, Any]:
        delivery = await service.redeliver(
            session, delivery_id, company_id=company, actor=COMMAND_LINE
        )
        return delivery_view(delivery, await service.event_refs(session, [delivery]))

    data = write(work)
    if json_:
        print_json(data)
    else:
        out.print(f"Delivery {data['id']} ({data['event_type']}) queued again")
