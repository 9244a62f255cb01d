"""What an authenticated request carries: the key's tenant, warehouse and acting user."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.errors import NotFound
from tillbook.models import User, Warehouse


@dataclass(frozen=True)
class AuthContext:
    key_id: int
    company_id: int
    warehouse_id: int
    user_id: int
    user_name: str
    rate_limit: str
    allow_negative_stock: bool
    # The company's ``reference_version`` as the key lookup read it: the version of
    # the taxes and payment modes this request may take from a process cache. None:
    # not known (a terminal callback), so they are read from the database.
    reference_version: int | None = None
    # False when the key lookup found the branch neither requiring a till shift nor
    # with one open: a sale then looks for none. True (look) when not known.
    shifts_in_play: bool = True
    # The register this key is the credential of (``registers``), None for any other
    # key: only a register may send an offline sale or call the register endpoints.
    register_id: int | None = None


async def acting_for(
    session: AsyncSession, company_id: int, warehouse_id: int, actor_id: int
) -> AuthContext:
    """A staff member acting in the back office for one warehouse, as a key of that
    warehouse would (its ``allow_negative_stock``, the staff member as the creator of
    what is written): the one adapter through which the pages and the back-office API
    call the till's services (stock adjustments, transfers, voids, shifts). The caller
    has checked the staff member's permission for that warehouse; another company's
    warehouse is not found."""
    warehouse = await session.get(Warehouse, warehouse_id)
    if warehouse is None or warehouse.company_id != company_id:
        raise NotFound(f"warehouse {warehouse_id} not found")
    actor = await session.get(User, actor_id)
    return AuthContext(
        key_id=0,
        company_id=company_id,
        warehouse_id=warehouse_id,
        user_id=actor_id,
        user_name=actor.name if actor is not None else "",
        rate_limit="",
        allow_negative_stock=warehouse.allow_negative_stock,
    )
