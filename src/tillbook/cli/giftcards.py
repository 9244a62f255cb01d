"""Gift cards: expiring the ones past their last day (breakage)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Annotated

import typer

from tillbook.cli.common import JsonFlag, out, parse_date, print_json, run
from tillbook.db import Database

giftcards_app = typer.Typer(help="Gift cards and store credit.", no_args_is_help=True)


@giftcards_app.command("expire")
def giftcards_expire(
    company: Annotated[int, typer.Option("--company", help="Company id.")],
    today: Annotated[
        str | None,
        typer.Option(
            "--today", help="Expire cards whose last day is before this (default: today)."
        ),
    ] = None,
    json_: JsonFlag = False,
) -> None:
    """Move what each card past its expiry still holds to 41500 Breakage Income
    (Dr 21300, Cr 41500, one entry per card) and mark it expired. Safe to run
    again: an expired card is not expired twice. Run it daily, or before a close."""
    from tillbook.giftcards import service

    day = parse_date(today, "--today") or dt.date.today()

    async def work(db: Database) -> list[service.Expired]:
        done: list[service.Expired] = await db.unit(
            lambda uow: service.expire(uow, company, day, None)
        )
        return done

    done = run(work)
    total = sum((e.amount for e in done), start=Decimal(0))
    if json_:
        print_json(
            {
                "company_id": company,
                "expired": [
                    {"card_id": e.card_id, "amount": str(e.amount), "journal_entry_id": e.entry_id}
                    for e in done
                ],
                "breakage": str(total),
            }
        )
        return
    out.print(f"Company {company}: {len(done)} card(s) expired, {total} to breakage income")
