"""The operator command line (DESIGN.md §11): a contract that scripts rely on.

Every command reads ``TILLBOOK_DATABASE_URL`` and applies migrations first. With
``--json`` a command prints exactly one JSON object on stdout; logs and errors go
to stderr. A domain error (unknown company, wrong password, bad rate limit) is one
line on stderr and exit code 1, never a traceback; a malformed option is click's
usage error, exit code 2.

This package assembles the command groups, one module each; what they share
(running a unit against the database, ``--json`` printing, exit codes) is in
``common``. The order of registration below is the order ``--help`` lists them in.
"""

from __future__ import annotations

import logging
import sys

import typer

from tillbook.cli import (
    companies,
    currencies,
    demo,
    giftcards,
    keys,
    parties,
    periods,
    products,
    reports,
    serve,
    staff,
    terminals,
    webhooks,
)
from tillbook.config import get_settings

app = typer.Typer(
    help="tillbook: retail POS, inventory and double-entry accounting service.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
)
app.command()(serve.serve)
app.command()(serve.worker)
app.command()(serve.migrate)
app.command(name="citus-script")(serve.citus_script)
app.command()(demo.demo)
app.add_typer(companies.company_app, name="company")
app.add_typer(companies.warehouse_app, name="warehouse")
app.add_typer(currencies.currency_app, name="currency")
app.add_typer(currencies.rates_app, name="rates")
app.add_typer(products.product_app, name="product")
app.add_typer(staff.staff_app, name="staff")
app.add_typer(keys.keys_app, name="keys")
app.add_typer(reports.report_app, name="report")
app.add_typer(parties.customer_app, name="customer")
app.add_typer(parties.supplier_app, name="supplier")
app.add_typer(parties.import_app, name="import")
app.add_typer(reports.export_app, name="export")
app.add_typer(periods.period_app, name="period")
app.add_typer(giftcards.giftcards_app, name="giftcards")
app.add_typer(webhooks.webhooks_app, name="webhooks")
app.add_typer(terminals.terminals_app, name="terminals")


def main() -> None:
    try:
        settings = get_settings()
    except ValueError as exc:  # pydantic's ValidationError: a malformed TILLBOOK_* variable
        typer.echo(f"error: invalid settings: {exc}", err=True)
        raise SystemExit(1) from None
    level = logging.getLevelName(settings.log_level.upper())
    logging.basicConfig(
        stream=sys.stderr,
        level=level if isinstance(level, int) else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    if logging.getLogger().level > logging.DEBUG:
        logging.getLogger("alembic").setLevel(logging.WARNING)
    app()
