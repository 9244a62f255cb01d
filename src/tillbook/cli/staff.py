"""Staff members: the people who log in to the back office, with a role.

The password is never an argument (it would sit in the shell's history and the
process list): it is read from ``TILLBOOK_STAFF_PASSWORD`` when set, else prompted
for (hidden, twice) on a terminal, else read as the first line of standard input.
Changes made here are recorded in the audit trail with no staff member as the
actor (an operator at the command line)."""

from __future__ import annotations

import os
import sys
from typing import Annotated, Any

import typer
from rich.table import Table
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.cli.common import JsonFlag, fail, out, print_json, read, write
from tillbook.kit.pagination import Page
from tillbook.reports.common import check_scope
from tillbook.tenancy import staff as service

staff_app = typer.Typer(help="Staff members and their roles.", no_args_is_help=True)

CompanyOpt = Annotated[int, typer.Option("--company", help="Company id.")]
PASSWORD_ENV = "TILLBOOK_STAFF_PASSWORD"
ALL = Page(page=1, limit=1_000_000)


def _password(prompt: str = "Password for the new staff member") -> str:
    given = os.environ.get(PASSWORD_ENV)
    if given:
        return given
    if sys.stdin.isatty():
        entered: str = typer.prompt(prompt, hide_input=True, confirmation_prompt=True)
        return entered
    line = sys.stdin.readline().rstrip("\r\n")
    if not line:
        fail(f"no password: set {PASSWORD_ENV} or send it on standard input")
    return line


@staff_app.command("create")
def staff_create(
    company: CompanyOpt,
    email: Annotated[str, typer.Option("--email", help="Login e-mail (one login per e-mail).")],
    name: Annotated[str, typer.Option("--name", help="The person's name.")],
    role: Annotated[str, typer.Option("--role", help="owner, manager, accountant or cashier.")],
    warehouse: Annotated[
        int | None,
        typer.Option("--warehouse", help="Limit them to one warehouse (not for owners)."),
    ] = None,
    json_: JsonFlag = False,
) -> None:
    """Create a staff member who can log in to the back office; the password comes
    from $TILLBOOK_STAFF_PASSWORD, a prompt or standard input."""
    password = _password()

    async def work(session: AsyncSession) -> dict[str, Any]:
        await check_scope(session, company)
        new = service.NewStaff(
            name=name, email=email, role=role, password=password, warehouse_id=warehouse
        )
        user = await service.create_staff(session, company, new, actor_id=None)
        return {"company_id": company, **service.view(user)}

    data = write(work)
    if json_:
        print_json(data)
        return
    scope = f"warehouse {data['warehouse_id']}" if data["warehouse_id"] else "all warehouses"
    out.print(
        f"Staff member {data['id']} {data['name']!r} ({data['email']}) created in company "
        f"{company}: {data['role']}, {scope}"
    )


@staff_app.command("list")
def staff_list(
    company: CompanyOpt,
    json_: JsonFlag = False,
) -> None:
    """List a company's staff members, archived ones too."""

    async def work(session: AsyncSession) -> dict[str, Any]:
        await check_scope(session, company)
        _total, users = await service.list_staff(session, company, ALL)
        return {"company_id": company, "staff": [service.view(u) for u in users]}

    data = read(work)
    if json_:
        print_json(data)
        return
    table = Table("id", "name", "email", "role", "warehouse", "status")
    for s in data["staff"]:
        table.add_row(
            str(s["id"]),
            s["name"],
            s["email"] or "",
            s["role"],
            str(s["warehouse_id"] or "all"),
            "archived" if s["archived_at"] else "active",
        )
    out.print(table)


@staff_app.command("set-password")
def staff_set_password(
    company: CompanyOpt,
    staff_id: Annotated[int, typer.Option("--id", help="Staff member id.")],
    json_: JsonFlag = False,
) -> None:
    """Reset a staff member's password (from $TILLBOOK_STAFF_PASSWORD, a prompt or
    standard input): every session of theirs ends at once."""
    password = _password("New password")

    async def work(session: AsyncSession) -> dict[str, Any]:
        await check_scope(session, company)
        user = await service.get_staff(session, company, staff_id)
        user = await service.update_staff(
            session, company, staff_id, user.version, actor_id=None, password=password
        )
        return {"company_id": company, **service.view(user)}

    data = write(work)
    if json_:
        print_json(data)
    else:
        out.print(f"Password of staff member {data['id']} {data['name']!r} changed; signed out")


@staff_app.command("archive")
def staff_archive(
    company: CompanyOpt,
    staff_id: Annotated[int, typer.Option("--id", help="Staff member id.")],
    json_: JsonFlag = False,
) -> None:
    """Archive a staff member: their login and open sessions stop working. The last
    active owner of a company cannot be archived."""

    async def work(session: AsyncSession) -> dict[str, Any]:
        await check_scope(session, company)
        user = await service.archive_staff(session, company, staff_id, actor_id=None)
        return {"company_id": company, **service.view(user)}

    data = write(work)
    if json_:
        print_json(data)
    else:
        out.print(f"Staff member {data['id']} {data['name']!r} archived at {data['archived_at']}")
