"""API key pairs: create, list, revoke and reveal."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.table import Column, Table
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.cli.common import JsonFlag, iso, out, print_json, read, write
from tillbook.models import ApiKey
from tillbook.reports.common import check_scope
from tillbook.tenancy import service as tenancy

keys_app = typer.Typer(help="API key pairs, one warehouse each.", no_args_is_help=True)


@keys_app.command("create")
def keys_create(
    warehouse: Annotated[int, typer.Option("--warehouse", help="Warehouse id.")],
    name: Annotated[str, typer.Option("--name", help="A name for the key (terminal, shop).")],
    rate_limit: Annotated[
        str, typer.Option("--rate-limit", help="N/minute or N/day (also N/second, N/hour).")
    ] = "600/minute",
    require_signature: Annotated[
        bool, typer.Option("--require-signature", help="Refuse requests without HMAC signature.")
    ] = False,
    user: Annotated[
        int | None,
        typer.Option(
            "--user",
            help="Staff member id the key acts as (the staff_member of its sales); "
            "default: a user of its own named after the key.",
        ),
    ] = None,
    json_: JsonFlag = False,
) -> None:
    """Create a key pair for a warehouse; the secret is printed once."""

    async def work(session: AsyncSession) -> dict[str, Any]:
        new = await tenancy.create_api_key(
            session,
            warehouse,
            name,
            rate_limit=rate_limit,
            require_signature=require_signature,
            user_id=user,
        )
        data: dict[str, Any] = {
            "id": new.key.id,
            "name": new.key.name,
            "warehouse_id": new.key.warehouse_id,
            "public_key": new.key.public_key,
            "secret_key": new.secret_key,
            "hmac_secret": new.hmac_secret,
            "rate_limit": new.key.rate_limit,
            "require_signature": new.key.require_signature,
        }
        if user is not None:  # DESIGN §11's shape, plus the staff member when named
            data["user_id"] = new.key.user_id
        return data

    data = write(work)
    if json_:
        print_json(data)
        return
    out.print(f"Key {data['id']} {data['name']!r} for warehouse {data['warehouse_id']}")
    out.print(f"  public_key   {data['public_key']}")
    out.print(f"  secret_key   {data['secret_key']}")
    out.print(f"  hmac_secret  {data['hmac_secret']}")
    out.print(f"  rate_limit   {data['rate_limit']}")
    out.print(f"  signature    {'required' if data['require_signature'] else 'optional'}")
    if "user_id" in data:
        out.print(f"  acts as      staff member {data['user_id']}")
    out.print("The secret is shown once; `tillbook keys reveal` needs the admin password.")


@keys_app.command("list")
def keys_list(
    company: Annotated[int, typer.Option("--company", help="Company id.")],
    json_: JsonFlag = False,
) -> None:
    """List a company's keys (never their secrets)."""

    async def work(session: AsyncSession) -> dict[str, Any]:
        await check_scope(session, company)
        keys = (
            await session.execute(
                select(ApiKey).where(ApiKey.company_id == company).order_by(ApiKey.id)
            )
        ).scalars()
        return {
            "company_id": company,
            "keys": [
                {
                    "id": k.id,
                    "public_key": k.public_key,
                    "name": k.name,
                    "warehouse_id": k.warehouse_id,
                    "status": k.status,
                    "rate_limit": k.rate_limit,
                    "require_signature": k.require_signature,
                    "created_at": iso(k.created_at),
                    "revoked_at": iso(k.revoked_at),
                }
                for k in keys
            ],
        }

    data = read(work)
    if json_:
        print_json(data)
        return
    table = Table("name", "warehouse", "status", "rate limit", "created")
    table.columns.insert(0, Column("public_key", no_wrap=True, min_width=35))
    for k in data["keys"]:
        status = "active" if k["status"] == 1 else "revoked"
        table.add_row(
            k["public_key"],
            k["name"],
            str(k["warehouse_id"]),
            status,
            k["rate_limit"],
            (k["created_at"] or "")[:10],
        )
    out.print(table)


@keys_app.command("revoke")
def keys_revoke(
    public_key: Annotated[str, typer.Argument(help="The key's public key (pk_...).")],
    json_: JsonFlag = False,
) -> None:
    """Revoke a key: requests with it get 401 from now on. Revoking it again changes
    nothing and keeps the first revoked_at."""

    async def work(session: AsyncSession) -> dict[str, Any]:
        done = await tenancy.revoke_key(session, public_key)
        return {
            "public_key": done.key.public_key,
            "status": done.key.status,
            "revoked_at": iso(done.key.revoked_at),
            "already_revoked": done.already_revoked,
        }

    data = write(work)
    if json_:
        print_json(data)
    elif data["already_revoked"]:
        out.print(f"Key {data['public_key']} was already revoked at {data['revoked_at']}")
    else:
        out.print(f"Key {data['public_key']} revoked")


@keys_app.command("rotate")
def keys_rotate(
    public_key: Annotated[str, typer.Argument(help="The key's public key (pk_...).")],
    grace: Annotated[
        str,
        typer.Option(
            "--grace",
            help="How long the old secrets keep working: none (default), 1h, 24h or 7d.",
        ),
    ] = "none",
    json_: JsonFlag = False,
) -> None:
    """New secret and signing secret for an active key, printed once; the public key,
    branch and staff member stay. The old secrets stop working at once, or after
    ``--grace`` (tills changed one by one)."""

    async def work(session: AsyncSession) -> dict[str, Any]:
        period = tenancy.rotation_grace(grace, "--grace")
        key = await tenancy.find_key(session, public_key)
        new = await tenancy.rotate_company_key(
            session, key.company_id, key.id, actor_id=None, grace=period
        )
        until = new.key.previous_valid_until
        return {
            "public_key": new.key.public_key,
            "secret_key": new.secret_key,
            "hmac_secret": new.hmac_secret,
            "old_secrets_valid_until": until.isoformat() if until else None,
        }

    data = write(work)
    if json_:
        print_json(data)
    else:
        then = data["old_secrets_valid_until"]
        old = f"the old ones work until {then}" if then else "the old ones no longer work"
        out.print(f"Key {data['public_key']} has new secrets (shown once; {old})")
        out.print(f"  secret key:     {data['secret_key']}")
        out.print(f"  signing secret: {data['hmac_secret']}")


@keys_app.command("reveal")
def keys_reveal(
    public_key: Annotated[str, typer.Argument(help="The key's public key (pk_...).")],
    admin_password: Annotated[
        str,
        typer.Option(
            "--admin-password",
            prompt=True,
            hide_input=True,
            help="The password of one of the company's owners (prompted when omitted).",
        ),
    ],
    json_: JsonFlag = False,
) -> None:
    """Print a key's secret again; needs the password of one of the company's owners."""
    secret = read(lambda s: tenancy.reveal_secret(s, public_key, admin_password))
    if json_:
        print_json({"public_key": public_key, "secret_key": secret})
    else:
        typer.echo(secret)
