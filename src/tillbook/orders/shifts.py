"""Which till shift an order or a payment belongs to (the shift's own operations,
opening, cash in and out, reports and the close, are ``payments/till.py``).

An order made while a shift is open carries it: the one the request names
(``shift_id``), else the warehouse's only open shift, else the open shift the key's
user opened. A warehouse with ``require_shift`` refuses a sale without one.

The shift must still be open when the order commits: the order adds one to the
shift's ``sales_count`` with a guarded update in the unit's last statement, which
needs ``status = 'open'``. A close that committed first makes that update change no
row, and the unit runs again (``PremiseGone``), this time finding no open shift.
"""

from __future__ import annotations

from sqlalchemy import and_, literal, select

from tillbook.auth.context import AuthContext
from tillbook.errors import invalid
from tillbook.kit.refs import ref_to_id
from tillbook.models import Shift, Warehouse
from tillbook.models.base import table_of
from tillbook.orders.lookup import RefValue
from tillbook.unit import QueuedUpdate, UnitOfWork

_shifts = table_of(Shift)

SHIFT_ORDERS = QueuedUpdate(
    _shifts,
    ["id"],
    increments=["sales_count"],
    guard=lambda t, given: t.c.status == literal("open"),
)


async def _open_shifts(
    uow: UnitOfWork, company_id: int, warehouse_id: int
) -> tuple[bool, list[tuple[int, int | None, str | None]]]:
    """The warehouse's ``require_shift`` and its open shifts (id, opened by,
    register reference): one read."""
    rows = (
        await uow.session.execute(
            select(Warehouse.require_shift, Shift.id, Shift.opened_by, Shift.reference)
            .outerjoin(
                Shift,
                and_(
                    Shift.warehouse_id == Warehouse.id,
                    Shift.company_id == Warehouse.company_id,
                    Shift.status == "open",
                ),
            )
            .where(Warehouse.company_id == company_id, Warehouse.id == warehouse_id)
            .order_by(Shift.id)
        )
    ).all()
    required = bool(rows[0][0]) if rows else False
    return required, [(r[1], r[2], r[3]) for r in rows if r[1] is not None]


async def current(
    uow: UnitOfWork,
    key: AuthContext,
    ref: RefValue | None = None,
    *,
    for_sale: bool = False,
    field: str = "shift_id",
) -> int | None:
    """The open shift an order or payment of this request belongs to, or None.

    ``ref``: the shift the request names, by id, xid or a register's reference
    (``R1-S000007``; an unknown or closed one is a 422 naming ``field``).
    ``for_sale``: the warehouse's ``require_shift`` applies. When the key lookup saw
    no shift in play (``AuthContext.shifts_in_play``) and the request names none, no
    statement is spent: a shift opened in the instant since is the next request's."""
    if ref is None and not key.shifts_in_play:
        return None
    required, open_shifts = await _open_shifts(uow, key.company_id, key.warehouse_id)
    shift_id: int | None = None
    if ref is not None:
        wanted = ref_to_id(ref)
        named = [s for s, _, reference in open_shifts if s == wanted or reference == ref]
        if not named:
            raise invalid(field, f"no open shift {ref!r} in this warehouse")
        shift_id = named[0]
    elif len(open_shifts) == 1:
        shift_id = open_shifts[0][0]
    else:
        mine = [s for s, opener, _ in open_shifts if opener == key.user_id]
        shift_id = mine[-1] if mine else None
    if shift_id is None:
        if for_sale and required:
            raise invalid(
                field,
                "this warehouse sells only in an open till shift: open one (POST /shifts) "
                "or name it",
            )
        return None
    uow.defer(SHIFT_ORDERS, [{"company_id": key.company_id, "id": shift_id, "sales_count": 1}])
    return shift_id


async def for_sale(uow: UnitOfWork, key: AuthContext, ref: RefValue | None) -> int | None:
    return await current(uow, key, ref, for_sale=True)
