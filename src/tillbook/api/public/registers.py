"""What a register asks of the server with its own credential (DESIGN.md §15):
who it is, its cashiers' PINs, and its heartbeat. Any other key is refused (403)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Request

from tillbook.api import envelope, routing
from tillbook.api.body import parse_body
from tillbook.api.deps import DB, CurrentKey
from tillbook.api.public import openapi as r
from tillbook.auth.context import AuthContext
from tillbook.errors import Forbidden
from tillbook.registers import service
from tillbook.registers.schemas import HeartbeatIn

router = routing.public(tags=["register"])


async def register_key(key: CurrentKey) -> AuthContext:
    if key.register_id is None:
        raise Forbidden(
            "this endpoint answers a register's credential only; pair a register in the "
            "back office (Settings, Registers)"
        )
    return key


RegisterKey = Annotated[AuthContext, Depends(register_key)]


@router.get("/register", responses=r.ok(r.RegisterResponse, *r.READ))
async def read_register(key: RegisterKey, db: DB) -> dict[str, Any]:
    """The register itself, its branch's receipt texts, the highest invoice number
    of its prefix the server holds and its open shift."""
    return envelope.ok(await db.read(lambda s: service.details(s, key)))


@router.get("/register/cashiers", responses=r.ok(r.CashierList, *r.READ))
async def list_cashiers(key: RegisterKey, db: DB) -> dict[str, Any]:
    """The staff who may sell here with a PIN, and the PBKDF2-SHA256 parameters
    (iterations, salt, 32-byte hash) the register checks a PIN against offline."""
    return envelope.ok(await db.read(lambda s: service.cashiers(s, key)))


@router.post(
    "/register/heartbeat",
    openapi_extra=r.write_body(HeartbeatIn),
    responses=r.ok(r.HeartbeatResponse, 400, 415, 422),
)
async def heartbeat(request: Request, key: RegisterKey, db: DB) -> dict[str, Any]:
    """Writes queued on the device and the ones the server refused, shown in the
    back office's list of registers."""
    body, _raw = await parse_body(request, HeartbeatIn)
    return envelope.ok(await db.write(lambda s: service.heartbeat(s, key, body)))
