"""Closing the books (period close) and reopening them (period reopen)."""

from __future__ import annotations

from typing import Annotated

import typer

from tillbook.cli.common import JsonFlag, out, parse_date, print_json, read, run

period_app = typer.Typer(help="Close and reopen the books.", no_args_is_help=True)

CompanyOpt = Annotated[int, typer.Option("--company", help="Company id.")]


@period_app.command("close")
def period_close(
    company: CompanyOpt,
    through: Annotated[
        str, typer.Option("--through", help="Last day to close, YYYY-MM-DD (up to today).")
    ],
    json_: JsonFlag = False,
) -> None:
    """Close the books through a day: nothing can be dated on or before it afterwards.
    A close that passes 31 December moves that year's income and expenses to 31200
    Retained Earnings."""
    from tillbook.reports import periods

    day = parse_date(through, "--through")
    assert day is not None
    data = run(lambda db: periods.close(db, company, day))
    if json_:
        print_json(data)
        return
    out.print(
        f"Company {company}: books closed through {data['closed_through']}"
        + (
            f", year-end closing entries {', '.join(map(str, data['closing_entries']))}"
            if data["closing_entries"]
            else ""
        )
        + f"; roll-ups through {data['rolled_up_through']}"
    )


@period_app.command("reopen")
def period_reopen(
    company: CompanyOpt,
    through: Annotated[
        str | None,
        typer.Option("--through", help="Keep the books closed through this day (YYYY-MM-DD)."),
    ] = None,
    all_: Annotated[bool, typer.Option("--all", help="Reopen every closed period.")] = False,
    json_: JsonFlag = False,
) -> None:
    """Reopen closed days (the owner's decision; recorded in the audit trail)."""
    from tillbook.reports import periods

    if (through is None) == (not all_):
        raise typer.BadParameter("give --through DAY or --all (not both)")
    day = parse_date(through, "--through")
    data = run(lambda db: periods.reopen(db, company, day))
    if json_:
        print_json(data)
        return
    out.print(
        f"Company {company}: books reopened (were closed through {data['was_closed_through']}); "
        + (
            f"now closed through {data['closed_through']}"
            if data["closed_through"]
            else "no period is closed"
        )
    )


@period_app.command("status")
def period_status(company: CompanyOpt, json_: JsonFlag = False) -> None:
    """The day the books are closed through and the roll-ups kept."""
    from tillbook.reports import periods

    data = read(lambda s: periods.status(s, company))
    if json_:
        print_json(data)
        return
    out.print(
        f"Company {company}: closed through {data['closed_through'] or 'nothing'}, "
        f"roll-ups through {data['rolled_up_through'] or 'nothing'}"
    )
