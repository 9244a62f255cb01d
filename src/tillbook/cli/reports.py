"""Reading the books (report) and exporting them as plain-text accounting (export)."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

import typer
from rich.table import Table
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.cli.common import JsonFlag, out, parse_date, print_json, read, run

report_app = typer.Typer(help="Read the books.", no_args_is_help=True)
export_app = typer.Typer(help="Export the books, customers and suppliers.", no_args_is_help=True)

CompanyOpt = Annotated[int, typer.Option("--company", help="Company id.")]
WarehouseOpt = Annotated[
    int | None, typer.Option("--warehouse", help="Only lines of this warehouse.")
]
FromOpt = Annotated[str | None, typer.Option("--from", help="First day, YYYY-MM-DD.")]
ToOpt = Annotated[str | None, typer.Option("--to", help="Last day, YYYY-MM-DD.")]


_NUMERIC = {"debit", "credit", "balance", "amount", "stock", "value"}


def _money_table(title: str, columns: list[str], rows: list[list[str]]) -> Table:
    table = Table(title=title, title_justify="left")
    for name in columns:
        table.add_column(name, justify="right" if name in _NUMERIC else "left")
    for row in rows:
        table.add_row(*row)
    return table


def _no_period(report: str, date_from: str | None, date_to: str | None) -> None:
    if date_from is not None or date_to is not None:
        raise typer.BadParameter(f"{report} is as of now; it takes no --from/--to")


@report_app.command("trial-balance")
def report_trial_balance(
    company: CompanyOpt,
    warehouse: WarehouseOpt = None,
    date_from: FromOpt = None,
    date_to: ToOpt = None,
    json_: JsonFlag = False,
) -> None:
    """Debits, credits and balance of every posting account."""
    from tillbook.reports import trial_balance

    start, end = parse_date(date_from, "--from"), parse_date(date_to, "--to")
    data = read(lambda s: trial_balance(s, company, warehouse, start, end))
    if json_:
        print_json(data)
        return
    rows = [
        [a["code"], a["name"], a["type"], a["debit"], a["credit"], a["balance"]]
        for a in data["accounts"]
    ]
    rows.append(["", "Total", "", data["total_debit"], data["total_credit"], ""])
    title = f"Trial balance, company {company}{_scope(warehouse, data['date_from'])}"
    out.print(
        _money_table(
            f"{title} as of {data['as_of']}",
            ["code", "name", "type", "debit", "credit", "balance"],
            rows,
        )
    )


def _scope(warehouse: int | None, date_from: str | None) -> str:
    text = f", warehouse {warehouse}" if warehouse is not None else ""
    return text + (f", from {date_from}" if date_from else "")


@report_app.command("profit-loss")
def report_profit_loss(
    company: CompanyOpt,
    warehouse: WarehouseOpt = None,
    date_from: FromOpt = None,
    date_to: ToOpt = None,
    json_: JsonFlag = False,
) -> None:
    """Income and expenses over a period, and the net profit."""
    from tillbook.reports import profit_loss

    start, end = parse_date(date_from, "--from"), parse_date(date_to, "--to")
    data = read(lambda s: profit_loss(s, company, warehouse, start, end))
    if json_:
        print_json(data)
        return
    rows: list[list[str]] = []
    for label, key in (("Income", "income"), ("Expenses", "expenses")):
        rows += [[a["code"], a["name"], a["amount"]] for a in data[key]["accounts"]]
        rows.append(["", f"Total {label.lower()}", data[key]["total"]])
    rows.append(["", "Net profit", data["net_profit"]])
    period = f"{data['date_from'] or 'start'} to {data['date_to'] or 'today'}"
    out.print(
        _money_table(
            f"Profit and loss, company {company}" + _scope(warehouse, None) + f", {period}",
            ["code", "name", "amount"],
            rows,
        )
    )


@report_app.command("balance-sheet")
def report_balance_sheet(
    company: CompanyOpt,
    warehouse: WarehouseOpt = None,
    date_from: FromOpt = None,
    date_to: Annotated[
        str | None, typer.Option("--to", help="As of this day (YYYY-MM-DD).")
    ] = None,
    json_: JsonFlag = False,
) -> None:
    """Assets, liabilities and equity (with current earnings) as of a day."""
    from tillbook.reports import balance_sheet

    if date_from is not None:
        raise typer.BadParameter("the balance sheet is as of a day: use --to only")
    as_of = parse_date(date_to, "--to")
    data = read(lambda s: balance_sheet(s, company, warehouse, as_of))
    if json_:
        print_json(data)
        return
    rows: list[list[str]] = []
    for label, key in (("Assets", "assets"), ("Liabilities", "liabilities"), ("Equity", "equity")):
        rows += [[a["code"], a["name"], a["amount"]] for a in data[key]["accounts"]]
        if key == "equity":
            rows.append(["", "Current earnings", data["equity"]["current_earnings"]])
        rows.append(["", f"Total {label.lower()}", data[key]["total"]])
    rows.append(["", "Liabilities and equity", data["total_liabilities_and_equity"]])
    out.print(
        _money_table(
            f"Balance sheet, company {company}"
            + _scope(warehouse, None)
            + f" as of {data['as_of']}"
            + ("" if data["balanced"] else " (DOES NOT BALANCE)"),
            ["code", "name", "amount"],
            rows,
        )
    )


@report_app.command("stock-valuation")
def report_stock_valuation(
    company: CompanyOpt,
    warehouse: Annotated[
        int | None,
        typer.Option("--warehouse", help="One warehouse; every warehouse when omitted."),
    ] = None,
    date_from: FromOpt = None,
    date_to: ToOpt = None,
    json_: JsonFlag = False,
) -> None:
    """FIFO layer value per product against the GL inventory account (11700)."""
    from tillbook.reports import stock_valuation, stock_valuation_company

    _no_period("stock-valuation", date_from, date_to)
    if warehouse is not None:
        wid = warehouse
        data = read(lambda s: stock_valuation(s, company, wid))
        sections = [data]
    else:
        data = read(lambda s: stock_valuation_company(s, company))
        sections = data["warehouses"]
    if json_:
        print_json(data)
        return
    for section in sections:
        rows = [
            [str(p["product_id"]), p["xid"], p["name"], str(p["current_stock"]), p["value"]]
            for p in section["products"]
        ]
        rows.append(["", "", "Total", "", section["total_value"]])
        rows.append(["", "", "GL 11700 (this warehouse)", "", section["gl_inventory_balance"]])
        out.print(
            _money_table(
                f"Stock valuation, warehouse {section['warehouse_id']}",
                ["id", "xid", "name", "stock", "value"],
                rows,
            )
        )
    if warehouse is None:
        out.print(
            f"Company {company}: stock {data['total_value']}, "
            f"GL 11700 {data['gl_inventory_balance']}"
        )


LimitOpt = Annotated[
    int | None, typer.Option("--limit", help="Lines per page (1 to 1000, default 100).")
]
CursorOpt = Annotated[
    str | None, typer.Option("--cursor", help="Where to go on: the last page's next_cursor.")
]
CsvFlag = Annotated[
    bool, typer.Option("--csv", help="Every page as CSV on stdout, written as it is read.")
]


def _print_lines(title: str, data: dict[str, Any]) -> None:
    rows = [
        [
            line["date"],
            str(line["entry_id"]),
            line["narration"],
            line["debit"],
            line["credit"],
            line["balance"],
        ]
        for line in data["lines"]
    ]
    opening = data["opening_balance"]
    out.print(
        _money_table(
            title + (f" (opening {opening})" if opening is not None else ""),
            ["date", "entry", "narration", "debit", "credit", "balance"],
            rows,
        )
    )
    out.print(f"Closing balance {data['closing_balance']}")
    if data["next_cursor"]:
        out.print(f"More: --cursor {data['next_cursor']}")


def _write_csv(page: Callable[[AsyncSession, str | None], Awaitable[dict[str, Any]]]) -> None:
    from tillbook.reports.ledgers import csv_rows

    async def work(session: AsyncSession) -> None:
        async for chunk in csv_rows(lambda cursor: page(session, cursor)):
            sys.stdout.write(chunk)

    read(work)
    sys.stdout.flush()


@report_app.command("ledger")
def report_ledger(
    company: CompanyOpt,
    account: Annotated[str, typer.Option("--account", help="Account code, e.g. 11500.")],
    warehouse: WarehouseOpt = None,
    date_from: FromOpt = None,
    date_to: ToOpt = None,
    limit: LimitOpt = None,
    cursor: CursorOpt = None,
    csv: CsvFlag = False,
    json_: JsonFlag = False,
) -> None:
    """One account's lines with a running balance (debit - credit), a page at a time."""
    from tillbook.reports.ledgers import account_ledger_page

    start, end = parse_date(date_from, "--from"), parse_date(date_to, "--to")

    def page(s: AsyncSession, at: str | None, size: int | None = None) -> Any:
        return account_ledger_page(
            s,
            company,
            account,
            warehouse_id=warehouse,
            date_from=start,
            date_to=end,
            cursor=at,
            limit=size,
        )

    if csv:
        _write_csv(lambda s, at: page(s, at, 1000))
        return
    data = read(lambda s: page(s, cursor, limit))
    if json_:
        print_json(data)
        return
    acc = data["account"]
    _print_lines(
        f"Ledger {acc['code']} {acc['name']}, company {company}"
        f"{_scope(warehouse, data['date_from'])}",
        data,
    )


@report_app.command("statement")
def report_statement(
    company: CompanyOpt,
    party: Annotated[int, typer.Option("--party", help="Customer or supplier id.")],
    warehouse: WarehouseOpt = None,
    date_from: FromOpt = None,
    date_to: ToOpt = None,
    limit: LimitOpt = None,
    cursor: CursorOpt = None,
    csv: CsvFlag = False,
    json_: JsonFlag = False,
) -> None:
    """A customer's (what they owe) or supplier's (what is owed to them) statement."""
    from tillbook.reports.ledgers import party_statement_page

    start, end = parse_date(date_from, "--from"), parse_date(date_to, "--to")

    def page(s: AsyncSession, at: str | None, size: int | None = None) -> Any:
        return party_statement_page(
            s,
            company,
            party,
            warehouse_id=warehouse,
            date_from=start,
            date_to=end,
            cursor=at,
            limit=size,
        )

    if csv:
        _write_csv(lambda s, at: page(s, at, 1000))
        return
    data = read(lambda s: page(s, cursor, limit))
    if json_:
        print_json(data)
        return
    who = data["party"]
    _print_lines(
        f"Statement of {who['type']} {who['id']} {who['name']} ({who['account']}), "
        f"company {company}{_scope(warehouse, data['date_from'])}",
        data,
    )


@report_app.command("check-rollups")
def report_check_rollups(
    company: CompanyOpt,
    build: Annotated[
        bool, typer.Option("--build", help="First roll up any closed month still missing.")
    ] = False,
    json_: JsonFlag = False,
) -> None:
    """Compare every closed month's roll-ups with its journal lines; exit 1 on a difference."""
    from tillbook.reports import periods

    data = run(lambda db: periods.check(db, company, build=build))
    if json_:
        print_json(data)
    else:
        out.print(
            f"Company {company}: {data['rollups']} account roll-ups and "
            f"{data['party_rollups']} party roll-ups through {data['rolled_up_through']}, "
            + ("all agree with the lines" if data["ok"] else "DIFFER from the lines:")
        )
        for difference in data["differences"]:
            out.print(f"  {difference}")
    if not data["ok"]:
        raise typer.Exit(1)


@export_app.command("journal")
def export_journal_command(
    company: CompanyOpt,
    fmt: Annotated[
        str,
        typer.Option(
            "--format", help="beancount (bean-check) or hledger (hledger check; also: ledger)."
        ),
    ] = "beancount",
    date_from: FromOpt = None,
    date_to: ToOpt = None,
) -> None:
    """The journal on stdout as plain-text accounting, one transaction per entry,
    written as it is read (constant memory). With --from, one transaction first
    carries the balances before that day."""
    from tillbook.reports.journal import export_journal

    start, end = parse_date(date_from, "--from"), parse_date(date_to, "--to")

    async def work(session: AsyncSession) -> None:
        write = sys.stdout.write
        async for line in export_journal(session, company, fmt, date_from=start, date_to=end):
            write(line + "\n")

    read(work)
    sys.stdout.flush()
