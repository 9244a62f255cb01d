"""The company's currencies and exchange rates (DESIGN §11, §16): ``tillbook
currency enable|disable|list`` and ``tillbook rates set|import|list``.

The same service calls as the admin API and the back office (``currency/rates.py``),
so a bad code or rate is refused with the same message, exit code 1 and nothing
written; a refused file names every bad row on stderr. Changes are audited as made
by the command line."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, TypeVar

import typer
from rich.table import Table
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.auth.actor import COMMAND_LINE
from tillbook.cli.common import JsonFlag, every_problem, out, parse_date, print_json
from tillbook.cli.common import read as read_db
from tillbook.cli.common import write as write_db
from tillbook.cli.import_export import read_file
from tillbook.currency import rates
from tillbook.errors import TillbookError
from tillbook.kit import numerals
from tillbook.reports.common import check_scope

T = TypeVar("T")

currency_app = typer.Typer(help="Currencies a company trades in.", no_args_is_help=True)
rates_app = typer.Typer(help="Exchange rates (base units per foreign unit).", no_args_is_help=True)

CompanyOpt = Annotated[int, typer.Option("--company", help="Company id.")]
CodeArg = Annotated[str, typer.Argument(help="ISO 4217 code, such as EUR.")]


def _on_company(company: int, work: Callable[[AsyncSession], Awaitable[T]], *, change: bool) -> T:
    """``work`` for ``company`` (checked first: an unknown one exits 1), in a write
    transaction when it ``change``s anything; a refusal lists every problem."""

    async def run(session: AsyncSession) -> T:
        await check_scope(session, company)
        try:
            return await work(session)
        except TillbookError as exc:
            raise every_problem(exc) from None

    return write_db(run) if change else read_db(run)


def _switch(code: str, company: int, on: bool, json_: bool) -> None:
    async def work(session: AsyncSession) -> rates.AdminCurrency:
        return rates.currency_view(await rates.enable(session, company, code, COMMAND_LINE, on=on))

    data = _on_company(company, work, change=True)
    if json_:
        print_json(data)
    else:
        state = "enabled" if data["enabled"] else "disabled"
        out.print(
            f"{data['currency']} {state} for company {company} "
            f"({data['minor_units']} decimal places)"
        )


@currency_app.command("enable")
def currency_enable(code: CodeArg, company: CompanyOpt, json_: JsonFlag = False) -> None:
    """Enable a foreign currency: documents may then be in it (once it has a rate)."""
    _switch(code, company, True, json_)


@currency_app.command("disable")
def currency_disable(code: CodeArg, company: CompanyOpt, json_: JsonFlag = False) -> None:
    """Refuse new documents in a currency; its rates and documents stay readable."""
    _switch(code, company, False, json_)


@currency_app.command("list")
def currency_list(company: CompanyOpt, json_: JsonFlag = False) -> None:
    """The base currency and every currency enabled, with its newest rate."""

    data = _on_company(company, lambda s: rates.overview(s, company), change=False)
    if json_:
        print_json(data)
        return
    out.print(f"Base currency {data['base_currency']}")
    table = Table("currency", "decimals", "enabled", "newest rate", "from")
    for c in data["currencies"]:
        table.add_row(
            c["currency"],
            str(c["minor_units"]),
            "yes" if c["enabled"] else "no",
            c["latest_rate"] or "-",
            c["latest_rate_date"] or "-",
        )
    out.print(table)


@rates_app.command("set")
def rates_set(
    company: CompanyOpt,
    currency: Annotated[str, typer.Option("--currency", help="ISO 4217 code, such as EUR.")],
    date: Annotated[str, typer.Option("--date", help="First day it applies, YYYY-MM-DD.")],
    rate: Annotated[str, typer.Option("--rate", help="Base units per one unit of it.")],
    json_: JsonFlag = False,
) -> None:
    """Set a rate from a date on; a second one for that date is a correction."""
    day = parse_date(date, "--date")
    assert day is not None
    value = numerals.decimal(rate.strip())
    if value is None:
        raise typer.BadParameter(
            f"expected a number such as 1.085, got {rate!r}", param_hint="--rate"
        )

    async def work(session: AsyncSession) -> rates.AdminExchangeRate:
        entered = await rates.set_rate(session, company, currency, day, value, COMMAND_LINE)
        return rates.rate_view(entered)

    data = _on_company(company, work, change=True)
    if json_:
        print_json(data)
    else:
        what = "corrected" if data["corrects"] else "set"
        out.print(f"{data['currency']} {data['date']}: rate {data['rate']} {what}")


@rates_app.command("import")
def rates_import(
    path: Annotated[Path, typer.Argument(help="CSV file: date,currency,rate.")],
    company: CompanyOpt,
    json_: JsonFlag = False,
) -> None:
    """Import a CSV of rates (header date,currency,rate): all rows or none."""
    data = read_file(path, rates.MAX_IMPORT_BYTES)

    async def work(session: AsyncSession) -> int:
        return await rates.import_rates(session, company, rates.decode_file(data), COMMAND_LINE)

    count = _on_company(company, work, change=True)
    if json_:
        print_json({"imported": count})
    else:
        out.print(f"{count} rates imported for company {company}")


@rates_app.command("list")
def rates_list(
    company: CompanyOpt,
    currency: Annotated[
        str | None, typer.Option("--currency", help="Only this currency's rates.")
    ] = None,
    corrections: Annotated[
        bool, typer.Option("--corrections", help="Every entry, the corrected ones too.")
    ] = False,
    json_: JsonFlag = False,
) -> None:
    """Rates newest date first: of each date the one in force (or every entry)."""

    async def work(session: AsyncSession) -> list[rates.AdminExchangeRate]:
        found = await rates.list_rates(
            session, company, currency=currency, with_corrections=corrections
        )
        return [rates.rate_view(r) for r in found]

    data = _on_company(company, work, change=False)
    if json_:
        print_json({"company_id": company, "rates": data})
        return
    table = Table("date", "currency", "rate", "source", "entered", "note")
    for r in data:
        note = "superseded" if r["superseded"] else ("correction" if r["corrects"] else "")
        table.add_row(r["date"], r["currency"], r["rate"], r["source"], r["entered_at"] or "", note)
    out.print(table)
