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
import itertools
from dataclasses import dataclass
from decimal import Decimal

from sqlalchemy import exists, select
from sqlalchemy.ext.asyncio import AsyncSession
from typing_extensions import TypedDict

from tillbook.audit.service import Change, record, record_many
from tillbook.auth.actor import Actor
from tillbook.errors import NotFound, ValidationFailed, invalid
from tillbook.kit import currencies, numerals
from tillbook.kit.bounds import FX_RATE, LAST_STORABLE_DAY, storable_day_problem
from tillbook.kit.changes import iso
from tillbook.kit.problems import Problems
from tillbook.kit.shapes import DateStr, DateTimeStr, answer
from tillbook.kit.text import quoted
from tillbook.models import Company, CompanyCurrency, ExchangeRate, JournalEntry

# A rates file of more rows than this is refused whole (about 27 years of daily
# rates for 25 currencies): an import runs in one transaction.
MAX_IMPORT_ROWS = 250_000
# The bytes of such a file (a row is about 30 characters), refused before decoding.
MAX_IMPORT_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class Rate:
    """One rate as entered. ``superseded``: a later entry for the same currency and
    date replaced it (it is kept, and documents posted while it was in force keep
    it on their lines); ``corrects``: it replaced an earlier entry for that date."""

    currency: str
    date: dt.date
    rate: Decimal
    entered_at: dt.datetime | None
    source: str
    id: int | None = None
    superseded: bool = False
    corrects: bool = False


def rate_text(rate: Decimal) -> str:
    """A rate as a client reads it: exact, without the column's trailing zeros
    (``1.085``, not ``1.08500000``), never in exponent form."""
    return format(rate.quantize(FX_RATE.step).normalize(), "f")


# What the back office reads (``api/admin/currencies.py`` puts it in the envelope):
# a currency the company enabled, with its newest rate in the overview, and a rate
# as entered. A rate is a decimal string, exact (``rate_text``).


@answer
class AdminExchangeRate(TypedDict):
    id: int | None
    currency: str
    date: DateStr
    rate: str
    source: str
    entered_at: DateTimeStr | None
    superseded: bool
    corrects: bool


@answer
class AdminCurrency(TypedDict):
    currency: str
    minor_units: int
    enabled: bool


@answer
class AdminCurrencyRow(AdminCurrency):
    latest_rate: str | None
    latest_rate_date: DateStr | None


class CurrencyOverview(TypedDict):
    base_currency: str
    base_minor_units: int
    currencies: list[AdminCurrencyRow]


# ``GET /currencies``: the overview as the admin API answers it, flat beside
# ``status`` (``api/envelope.flat``).
@answer
class CurrencyList(TypedDict):
    base_currency: str
    base_minor_units: int
    data: list[AdminCurrencyRow]


@answer
class RatesImported(TypedDict):
    imported: int


def rate_view(rate: Rate) -> AdminExchangeRate:
    return {
        "id": rate.id,
        "currency": rate.currency,
        "date": rate.date.isoformat(),
        "rate": rate_text(rate.rate),
        "source": rate.source,
        "entered_at": None if rate.entered_at is None else iso(rate.entered_at),
        "superseded": rate.superseded,
        "corrects": rate.corrects,
    }


async def company(session: AsyncSession, company_id: int) -> Company:
    found = await session.get(Company, company_id)
    if found is None:
        raise NotFound(f"company {company_id} not found")
    return found


def check_code(field: str, text: str) -> str:
    """An ISO 4217 code as typed, upper-cased; a 422 naming ``field`` otherwise."""
    code = currencies.normalise(text)
    if not currencies.is_currency(code):
        raise invalid(
            field, f"{quoted(text)} is not an ISO 4217 currency code (such as EUR or USD)"
        )
    return code


def check_day(field: str, day: dt.date) -> dt.date:
    """A rate's date: one the database holds (from 1970; a rate may be entered ahead
    of its day, so the future is allowed)."""
    problem = storable_day_problem(day)
    if problem is not None:
        raise invalid(field, problem)
    return day


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
    check_day("date", date)
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
    return Rate(code, date, value, row.created_at, source, row.id, corrects=earlier is not None)


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
    ``with_corrections`` (then every row, newest entered first, the replaced ones
    marked ``superseded``). Each row says whether it ``corrects`` an earlier one."""
    query = select(ExchangeRate).where(ExchangeRate.company_id == company_id)
    if currency is not None:
        query = query.where(ExchangeRate.currency == check_code("currency", currency))
    query = query.order_by(
        ExchangeRate.rate_date.desc(), ExchangeRate.currency, ExchangeRate.id.desc()
    )
    out: list[Rate] = []
    rows = (await session.execute(query)).scalars()
    # The rows of one currency and date come together, newest entered first.
    for _key, group in itertools.groupby(rows, key=lambda r: (r.currency, r.rate_date)):
        entries = list(group)
        shown = entries if with_corrections else entries[:1]
        for n, row in enumerate(shown):
            out.append(
                Rate(
                    row.currency,
                    row.rate_date,
                    row.rate,
                    row.created_at,
                    row.source,
                    row.id,
                    superseded=n > 0,
                    corrects=n < len(entries) - 1,
                )
            )
            if len(out) >= limit:
                return out
    return out


async def latest(
    session: AsyncSession, company_id: int, code: str
) -> tuple[dt.date, Decimal] | None:
    """The newest rate of ``code`` whatever its date (one entered ahead included)."""
    return await rate_on(session, company_id, code, LAST_STORABLE_DAY)


async def overview(session: AsyncSession, company_id: int) -> CurrencyOverview:
    """The company's base currency and each currency it has enabled (or enabled and
    since disabled), with its minor units and newest rate: what the back office and
    ``GET /currencies`` show."""
    base = (await company(session, company_id)).base_currency
    rows: list[AdminCurrencyRow] = []
    for row in await enabled(session, company_id):
        newest = await latest(session, company_id, row.code)
        rows.append(
            {
                "currency": row.code,
                "minor_units": row.minor_units,
                "enabled": row.enabled,
                "latest_rate": None if newest is None else rate_text(newest[1]),
                "latest_rate_date": None if newest is None else newest[0].isoformat(),
            }
        )
    return {
        "base_currency": base,
        "base_minor_units": currencies.minor_units(base),
        "currencies": rows,
    }


def currency_view(row: CompanyCurrency) -> AdminCurrency:
    return {"currency": row.code, "minor_units": row.minor_units, "enabled": row.enabled}


def decode_file(data: bytes) -> str:
    """A rates file's bytes as text (UTF-8, a byte-order mark allowed): a 422
    naming ``file`` when too large or not text."""
    if len(data) > MAX_IMPORT_BYTES:
        raise invalid("file", f"must be at most {MAX_IMPORT_BYTES // (1024 * 1024)} MiB")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise invalid("file", "must be a UTF-8 CSV file of date,currency,rate") from None


def parse_rates_file(text: str) -> list[tuple[str, dt.date, Decimal]]:
    """A CSV of ``date,currency,rate`` rows (a header line of those names), every
    row checked: a 422 naming each bad row's field (``rows.N.field``), nothing read
    from a file with any bad row."""
    problems = Problems()
    reader = csv.reader(io.StringIO(text.lstrip("\ufeff")))
    try:
        rows = list(reader)
    except csv.Error as exc:  # a cell beyond the csv module's limit, a stray quote
        raise invalid("file", f"is not a CSV file of date,currency,rate ({exc})") from None
    if not rows or [c.strip().lower() for c in rows[0]] != ["date", "currency", "rate"]:
        raise invalid("file", "the first line must be the header date,currency,rate")
    # (line number, cells) of every line that is not blank, so that a problem names
    # the line a spreadsheet shows.
    body = [(n, r) for n, r in enumerate(rows[1:], start=2) if any(c.strip() for c in r)]
    if not body:
        raise invalid("file", "the file holds no rates")
    if len(body) > MAX_IMPORT_ROWS:
        raise invalid("file", f"at most {MAX_IMPORT_ROWS} rates per file")
    out: list[tuple[str, dt.date, Decimal]] = []
    for n, row in body:
        where = f"rows.{n}"
        if len(row) != 3:
            problems.add(where, "must have three cells: date,currency,rate")
            continue
        date_text, code_text, rate_cell = (c.strip() for c in row)
        try:
            day = dt.date.fromisoformat(date_text) if len(date_text) == 10 else None
        except ValueError:
            day = None
        if day is None:
            problems.add(f"{where}.date", f"{quoted(date_text)} is not a date YYYY-MM-DD")
        elif storable_day_problem(day) is not None:
            problems.add(f"{where}.date", str(storable_day_problem(day)))
            day = None
        code = currencies.normalise(code_text)
        if not currencies.is_currency(code):
            problems.add(f"{where}.currency", f"{quoted(code_text)} is not an ISO 4217 code")
        value = numerals.decimal(rate_cell)
        if value is None:
            problems.add(f"{where}.rate", f"{quoted(rate_cell)} is not a number")
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
                    "rate": rate_text(row.rate),
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
