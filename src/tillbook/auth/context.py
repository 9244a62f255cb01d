"""What an authenticated request carries: the key's tenant and warehouse, and who acts
(an :class:`~tillbook.auth.actor.Actor`: the key, its register, or a staff member or
the system acting for the warehouse as a key of it would)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.auth.actor import Actor
from tillbook.errors import NotFound
from tillbook.models import User, Warehouse


@dataclass(frozen=True)
class AuthContext:
    actor: Actor
    company_id: int
    warehouse_id: int
    rate_limit: str
    allow_negative_stock: bool
    # The company's ``reference_version`` as the key lookup read it: the version of
    # the taxes and payment modes this request may take from a process cache. None:
    # not known (a terminal callback), so they are read from the database.
    reference_version: int | None = None
    # False when the key lookup found the branch neither requiring a till shift nor
    # with one open: a sale then looks for none. True (look) when not known.
    shifts_in_play: bool = True

    # What the services read of the actor, by the names they always had.
    @property
    def user_id(self) -> int:
        """The staff member the change is written as (``created_by``)."""
        user_id = self.actor.user_id
        assert user_id is not None, "an AuthContext always acts as a staff member"
        return user_id

    @property
    def user_name(self) -> str:
        return self.actor.name

    @property
    def register_id(self) -> int | None:
        """The register this key is the credential of (``registers``), None for any
        other actor: only a register may send an offline sale or call the register
        endpoints."""
        return self.actor.register_id


async def acting_for(
    session: AsyncSession, company_id: int, warehouse_id: int, actor_id: int
) -> AuthContext:
    """A staff member acting in the back office for one warehouse, as a key of that
    warehouse would (its ``allow_negative_stock``, the staff member as the creator of
    what is written): the one adapter through which the pages and the back-office API
    call the till's services (stock adjustments, transfers, voids, shifts). The caller
    has checked the staff member's permission for that warehouse; another company's
    warehouse is not found."""
    warehouse = await session.scalar(
        select(Warehouse).where(Warehouse.company_id == company_id, Warehouse.id == warehouse_id)
    )
    if warehouse is None:
        raise NotFound(f"warehouse {warehouse_id} not found")
    staff = await session.scalar(
        select(User).where(User.company_id == company_id, User.id == actor_id)
    )
    return AuthContext(
        actor=Actor.staff(actor_id, staff.name if staff is not None else ""),
        company_id=company_id,
        warehouse_id=warehouse_id,
        rate_limit="",
        allow_negative_stock=warehouse.allow_negative_stock,
    )
