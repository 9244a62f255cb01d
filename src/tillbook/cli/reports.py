"""Reading the books (report) and exporting them as plain-text accounting (export)."""

from __future__ import annotations

import sys
from typing import Annotated

import typer
from rich.table import Table
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.cli.common import JsonFlag, out, parse_date, print_json, read

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


@report_app.command("ledger")
def report_ledger(
    company: CompanyOpt,
    account: Annotated[str, typer.Option("--account", help="Account code, e.g. 11500.")],
    warehouse: WarehouseOpt = None,
    date_from: FromOpt = None,
    date_to: ToOpt = None,
    json_: JsonFlag = False,
) -> None:
    """Every line of one account with a running balance (debit - credit)."""
    from tillbook.reports.journal import account_ledger

    start, end = parse_date(date_from, "--from"), parse_date(date_to, "--to")
    data = read(
        lambda s: account_ledger(
            s, company, account, warehouse_id=warehouse, date_from=start, date_to=end
        )
    )
    if json_:
        print_json(data)
        return
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
    acc = data["account"]
    out.print(
        _money_table(
            f"Ledger {acc['code']} {acc['name']}, company {company}"
            f"{_scope(warehouse, data['date_from'])} (opening {data['opening_balance']})",
            ["date", "entry", "narration", "debit", "credit", "balance"],
            rows,
        )
    )


@export_app.command("journal")
def export_journal_command(
    company: CompanyOpt,
    fmt: Annotated[
        str, typer.Option("--format", help="beancount (bean-check) or ledger (hledger check).")
    ] = "beancount",
) -> None:
    """The whole journal on stdout as plain-text accounting, one transaction per entry."""
    from tillbook.reports.journal import export_journal

    async def work(session: AsyncSession) -> None:
        async for line in export_journal(session, company, fmt):
            sys.stdout.write(line + "\n")

    read(work)
    sys.stdout.flush()
