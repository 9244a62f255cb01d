"""A company's currencies and exchange rates (DESIGN §16): enabling a currency,
setting, importing, listing and reading rates. The back office, the admin API and
the command line all call these, so each change is checked and audited once.

A rate is the company's own figure (base units per one foreign unit), never
fetched. Rates are insert-only: setting a rate for a date that has one records a
correction, and the latest one entered is used for documents posted from then on;
entries already posted keep the rate written on their lines."""

from __future__ import annotations

import csv
import datetime as dt
import io
from dataclasses import dataclass
from decimal import Decimal

from sqlalchemy import exists, select
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.audit.service import Change, record, record_many
from tillbook.auth.actor import Actor
from tillbook.errors import NotFound, ValidationFailed, invalid
from tillbook.kit import currencies, numerals
from tillbook.kit.bounds import FX_RATE
from tillbook.kit.problems import Problems
from tillbook.models import Company, CompanyCurrency, ExchangeRate, JournalEntry

# A rates file of more rows than this is refused whole (about 27 years of daily
# rates for 25 currencies): an import runs in one transaction.
MAX_IMPORT_ROWS = 250_000


@dataclass(frozen=True)
class Rate:
    currency: str
    date: dt.date
    rate: Decimal
    entered_at: dt.datetime | None
    source: str


async def company(session: AsyncSession, company_id: int) -> Company:
    found = await session.get(Company, company_id)
    if found is None:
        raise NotFound(f"company {company_id} not found")
    return found


def check_code(field: str, text: str) -> str:
    """An ISO 4217 code as typed, upper-cased; a 422 naming ``field`` otherwise."""
    code = currencies.normalise(text)
    if not currencies.is_currency(code):
        raise invalid(field, f"{text!r} is not an ISO 4217 currency code (such as EUR or USD)")
    return code


def check_rate(field: str, rate: Decimal) -> Decimal:
    """A rate the books can hold: positive, at most ``FX_RATE``'s digits and places."""
    if not rate.is_finite() or rate <= 0:
        raise invalid(field, "must be a positive number of base units per foreign unit")
    if not FX_RATE.holds(rate):
        raise invalid(field, f"must be at most {FX_RATE.max}")
    quantized = rate.quantize(FX_RATE.step)
    if quantized != rate:
        raise invalid(field, f"must have at most {FX_RATE.scale} decimal places")
    if quantized == 0:
        raise invalid(field, "must be a positive number of base units per foreign unit")
    return quantized


async def enabled(session: AsyncSession, company_id: int) -> list[CompanyCurrency]:
    rows = await session.execute(
        select(CompanyCurrency)
        .where(CompanyCurrency.company_id == company_id)
        .order_by(CompanyCurrency.code)
    )
    return list(rows.scalars())


async def enable(
    session: AsyncSession, company_id: int, code_text: str, actor: Actor, *, on: bool = True
) -> CompanyCurrency:
    """Enable (or, ``on=False``, disable) a foreign currency for the company."""
    base = (await company(session, company_id)).base_currency
    code = check_code("currency", code_text)
    if code == base:
        raise invalid(
            "currency", f"{code} is the company's base currency: the books are kept in it"
        )
    row = await session.get(CompanyCurrency, (company_id, code))
    before = None if row is None else {"enabled": row.enabled}
    if row is None:
        if not on:
            raise NotFound(f"currency {code} is not enabled")
        row = CompanyCurrency(
            company_id=company_id, code=code, minor_units=currencies.minor_units(code), enabled=True
        )
        session.add(row)
    else:
        row.enabled = on
    await session.flush()
    if before is None or before["enabled"] != on:
        await record(
            session,
            company_id=company_id,
            actor=actor,
            action="currency.enabled" if on else "currency.disabled",
            entity_type="currency",
            entity_id=None,
            before=before,
            after={"currency": code, "enabled": on, "minor_units": row.minor_units},
        )
    return row


async def is_enabled(session: AsyncSession, company_id: int, code: str) -> bool:
    row = await session.get(CompanyCurrency, (company_id, code))
    return row is not None and row.enabled


async def set_rate(
    session: AsyncSession,
    company_id: int,
    currency: str,
    date: dt.date,
    rate: Decimal,
    actor: Actor,
    *,
    source: str = "manual",
) -> Rate:
    """Record the rate of ``currency`` from ``date`` on; a second rate for the same
    date is a correction (audited with the rate it replaces)."""
    code = check_code("currency", currency)
    if not await is_enabled(session, company_id, code):
        raise invalid("currency", f"{code} is not enabled for this company: enable it first")
    value = check_rate("rate", rate)
    earlier = await _latest_for_day(session, company_id, code, date)
    row = ExchangeRate(
        company_id=company_id,
        currency=code,
        rate_date=date,
        rate=value,
        source=source,
        entered_by=actor.user_id,
    )
    session.add(row)
    await session.flush()
    await record(
        session,
        company_id=company_id,
        actor=actor,
        action="rate.corrected" if earlier is not None else "rate.set",
        entity_type="exchange_rate",
        entity_id=row.id,
        before=None if earlier is None else {"rate": str(earlier)},
        after={"currency": code, "date": date.isoformat(), "rate": str(value)},
    )
    return Rate(code, date, value, row.created_at, source)


async def _latest_for_day(
    session: AsyncSession, company_id: int, code: str, date: dt.date
) -> Decimal | None:
    return await session.scalar(
        select(ExchangeRate.rate)
        .where(
            ExchangeRate.company_id == company_id,
            ExchangeRate.currency == code,
            ExchangeRate.rate_date == date,
        )
        .order_by(ExchangeRate.id.desc())
        .limit(1)
    )


async def rate_on(
    session: AsyncSession, company_id: int, code: str, date: dt.date
) -> tuple[dt.date, Decimal] | None:
    """The rate in force on ``date``: the latest dated on or before it, and of that
    date the latest entered. None when the currency has no rate that early."""
    row = (
        await session.execute(
            select(ExchangeRate.rate_date, ExchangeRate.rate)
            .where(
                ExchangeRate.company_id == company_id,
                ExchangeRate.currency == code,
                ExchangeRate.rate_date <= date,
            )
            .order_by(ExchangeRate.rate_date.desc(), ExchangeRate.id.desc())
            .limit(1)
        )
    ).first()
    return None if row is None else (row[0], row[1])


async def list_rates(
    session: AsyncSession,
    company_id: int,
    *,
    currency: str | None = None,
    limit: int = 500,
    with_corrections: bool = False,
) -> list[Rate]:
    """Rates newest date first; of each date only the rate in force unless
    ``with_corrections`` (then every row, newest entered first)."""
    query = select(ExchangeRate).where(ExchangeRate.company_id == company_id)
    if currency is not None:
        query = query.where(ExchangeRate.currency == check_code("currency", currency))
    query = query.order_by(
        ExchangeRate.rate_date.desc(), ExchangeRate.currency, ExchangeRate.id.desc()
    )
    out: list[Rate] = []
    seen: set[tuple[str, dt.date]] = set()
    for row in (await session.execute(query)).scalars():
        key = (row.currency, row.rate_date)
        if key in seen and not with_corrections:
            continue
        seen.add(key)
        out.append(Rate(row.currency, row.rate_date, row.rate, row.created_at, row.source))
        if len(out) >= limit:
            break
    return out


def parse_rates_file(text: str) -> list[tuple[str, dt.date, Decimal]]:
    """A CSV of ``date,currency,rate`` rows (a header line of those names), every
    row checked: a 422 naming each bad row's field (``rows.N.field``), nothing read
    from a file with any bad row."""
    problems = Problems()
    reader = csv.reader(io.StringIO(text.lstrip("\ufeff")))
    rows = list(reader)
    if not rows or [c.strip().lower() for c in rows[0]] != ["date", "currency", "rate"]:
        raise invalid("file", "the first line must be the header date,currency,rate")
    body = [r for r in rows[1:] if any(c.strip() for c in r)]
    if not body:
        raise invalid("file", "the file holds no rates")
    if len(body) > MAX_IMPORT_ROWS:
        raise invalid("file", f"at most {MAX_IMPORT_ROWS} rates per file")
    out: list[tuple[str, dt.date, Decimal]] = []
    for n, row in enumerate(body, start=2):
        where = f"rows.{n}"
        if len(row) != 3:
            problems.add(where, "must have three cells: date,currency,rate")
            continue
        date_text, code_text, rate_text = (c.strip() for c in row)
        try:
            day = dt.date.fromisoformat(date_text) if len(date_text) == 10 else None
        except ValueError:
            day = None
        if day is None:
            problems.add(f"{where}.date", f"{date_text!r} is not a date YYYY-MM-DD")
        code = currencies.normalise(code_text)
        if not currencies.is_currency(code):
            problems.add(f"{where}.currency", f"{code_text!r} is not an ISO 4217 code")
        value = numerals.decimal(rate_text)
        if value is None:
            problems.add(f"{where}.rate", f"{rate_text!r} is not a number")
        else:
            try:
                value = check_rate(f"{where}.rate", value)
            except ValidationFailed as exc:
                for field, messages in exc.errors.items():
                    for message in messages:
                        problems.add(field, message)
                value = None
        if day is not None and value is not None and currencies.is_currency(code):
            out.append((code, day, value))
    problems.raise_if_any()
    return out


async def import_rates(session: AsyncSession, company_id: int, text: str, actor: Actor) -> int:
    """Every rate of a ``date,currency,rate`` file, in one transaction; a currency
    of the file that is not enabled refuses the whole file (naming the row)."""
    parsed = parse_rates_file(text)
    on = {c.code for c in await enabled(session, company_id) if c.enabled}
    problems = Problems()
    for n, (code, _day, _rate) in enumerate(parsed, start=2):
        if code not in on:
            problems.add(f"rows.{n}.currency", f"{code} is not enabled for this company")
    problems.raise_if_any()
    rows = [
        ExchangeRate(
            company_id=company_id,
            currency=code,
            rate_date=day,
            rate=rate,
            source="import",
            entered_by=actor.user_id,
        )
        for code, day, rate in parsed
    ]
    session.add_all(rows)
    await session.flush()
    await record_many(
        session,
        company_id=company_id,
        actor_id=actor.user_id,
        changes=[
            Change(
                "rate.imported",
                "exchange_rate",
                row.id,
                {
                    "currency": row.currency,
                    "date": row.rate_date.isoformat(),
                    "rate": str(row.rate),
                },
            )
            for row in rows
        ],
    )
    return len(rows)


async def has_entries(session: AsyncSession, company_id: int) -> bool:
    """Whether the company has posted anything: from then on its base currency is
    fixed (every amount in the books is in it)."""
    return bool(await session.scalar(select(exists().where(JournalEntry.company_id == company_id))))
