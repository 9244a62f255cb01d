"""The currency of a document entered in the back office (DESIGN §16): one pair of
fields (a currency chosen among the base and the enabled ones, and an optional
rate) that the delivery, payment and expense forms share. A company that has
enabled no foreign currency sees neither: its forms stay as they were."""

from __future__ import annotations

from typing import Any

from starlette.datastructures import FormData

from tillbook.currency import rates
from tillbook.db import Database
from tillbook.web.forms import decimal_field, text


async def choices(db: Database, company_id: int) -> list[tuple[str, str]]:
    """(code, label) of the base and each enabled currency; empty when only the
    base is in use (the form then shows no currency fields)."""

    async def read(session: Any) -> list[tuple[str, str]]:
        base = (await rates.company(session, company_id)).base_currency
        on = [c.code for c in await rates.enabled(session, company_id) if c.enabled]
        if not on:
            return []
        return [(base, f"{base} (base)"), *((code, code) for code in on)]

    return await db.read(read)


def read(form: FormData, errors: dict[str, list[str]]) -> dict[str, Any]:
    """The body's ``currency`` and ``exchange_rate`` from the form (absent: None,
    a base-currency document)."""
    return {
        "currency": text(form, "currency") or None,
        "exchange_rate": decimal_field(form, "exchange_rate", errors),
    }
