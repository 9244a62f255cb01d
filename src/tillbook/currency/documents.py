"""The currency of one document (DESIGN §16): which one, at what rate.

A sale, purchase, return, payment or expense may name a ``currency`` and an
``exchange_rate``. No currency, or the base one, is a base document (no
conversion). A foreign currency must be enabled; its rate is the one sent, or the
company's rate in force on the document's date; with neither, the document is
refused naming ``currency``, before anything is written."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.currency import rates
from tillbook.errors import invalid
from tillbook.ledger.fx import Conversion


async def conversion(
    session: AsyncSession,
    company_id: int,
    currency: str | None,
    rate: Decimal | None,
    date: dt.date,
    *,
    field: str = "currency",
    rate_field: str = "exchange_rate",
) -> Conversion | None:
    """The document's :class:`Conversion`, or None for a base-currency document.

    A document naming neither (every v1 client's) is answered without a read: the
    sale's hot path pays nothing for currencies it does not use."""
    if (currency is None or not currency.strip()) and rate is None:
        return None
    base = (await rates.company(session, company_id)).base_currency
    if currency is None or not currency.strip():
        if rate is not None and rate != 1:
            raise invalid(rate_field, f"is given without a currency: the document is in {base}")
        return None
    code = rates.check_code(field, currency)
    if code == base:
        if rate is not None and rate != 1:
            raise invalid(rate_field, f"must be 1 (or left out) for the base currency {base}")
        return None
    if not await rates.is_enabled(session, company_id, code):
        raise invalid(field, f"{code} is not enabled for this company (Settings → Currencies)")
    if rate is not None:
        return Conversion(code, rates.check_rate(rate_field, rate))
    found = await rates.rate_on(session, company_id, code, date)
    if found is None:
        raise invalid(
            field,
            f"there is no {code} rate on or before {date.isoformat()}: set one, or send "
            f"{rate_field}",
        )
    return Conversion(code, found[1])


def same_currency(
    field: str, document: str | None, other: str | None, what: str, base: str
) -> None:
    """A payment or return must be in the currency of the invoice it settles."""
    if (document or base) != (other or base):
        raise invalid(field, f"{what} is in {other or base}, this document in {document or base}")
