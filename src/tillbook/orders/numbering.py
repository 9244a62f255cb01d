"""Invoice numbers from a counter row locked in the issuing transaction (never MAX()+1).

``SAL-00001``, ``PUR-00001``, ``SRET-00001``, ``PRET-00001``: width 5, growing past
99999. ``ADJ-BATCH-1`` for price-adjustment batches. Numbers are gapless: the
counter row is locked from the moment a unit takes its number to its COMMIT, and
a unit that rolls back gives its number back. Take it in the unit's closing step,
after everything that can be done without it. Units of one series queue for the
row in this process first (``UnitOfWork.gate``), so that when every till of a
branch sells at once they are served in turn, not in PostgreSQL's wake-up order.

A unit run again (a neighbour changed the stock it planned on, ``PremiseGone``, or
any other reason to run again) takes its number *before* it plans again
(``take_before_plan``): every other unit of its series that the counter numbers
(the branch's sales; its purchase returns) changes stock only while it holds the
same row, so the new plan cannot be overtaken by one of them, and a sale loses its
premise to another sale at most once. Without that, thirty-two tills selling one
item raced each other to every layer's last unit and one could lose eight times in
a row. (Units the counter does not number — a sale with the client's own invoice
number, an adjustment, a transfer, a purchase return against the branch's sales —
can still overtake it; they are rare beside sales, and the unit has eight runs.)

A number a client already took by hand (``invoice_number`` in a request) is
skipped: order numbers are unique per warehouse and type in the table itself, so
a collision fails the unit, which runs again (``UnitOfWork.after_unique_race``)
and then checks each number before using it. That keeps a lookup out of the
common path.
"""

from __future__ import annotations

from tillbook.orders import repository as repo
from tillbook.unit import UnitOfWork

PREFIXES = {
    "sales": "SAL-",
    "purchases": "PUR-",
    "sales-returns": "SRET-",
    "purchase-returns": "PRET-",
    "price-adjustments": "ADJ-BATCH-",
    "purchase-orders": "PO-",
}


def format_number(counter_type: str, value: int) -> str:
    prefix = PREFIXES[counter_type]
    if counter_type == "price-adjustments":
        return f"{prefix}{value}"
    return f"{prefix}{value:05d}"


async def take(uow: UnitOfWork, company_id: int, warehouse_id: int, counter_type: str) -> str:
    """The next number of the series, skipping numbers clients already took."""
    await uow.gate(("invoice counter", warehouse_id, counter_type))
    check = counter_type == "price-adjustments" or uow.after_unique_race
    while True:
        value = await repo.next_counter_value(uow, company_id, warehouse_id, counter_type)
        number = format_number(counter_type, value)
        if not check or not await repo.number_taken(
            uow, company_id, warehouse_id, counter_type, number
        ):
            return number


async def take_late(uow: UnitOfWork, company_id: int, warehouse_id: int, counter_type: str) -> str:
    """The number as ``take`` gives it, taken by the unit's last statement
    (PostgreSQL): a placeholder until then, replaced wherever the unit writes or
    answers it (``unit.Late``). The counter row is then locked for that one
    statement and COMMIT, rather than from a round trip of its own through the
    closing step: every sale of a branch queues on that row, so the time it is held
    caps the branch's sales per second.

    Taken now, as ``take`` does, where the number must be checked before it is used
    (after a unique race), on a unit run again (it holds the number since before
    it planned), and on SQLite (one writer: nothing queues on the row)."""
    if not uow.is_postgresql or uow.attempt > 0 or uow.after_unique_race:
        return await take(uow, company_id, warehouse_id, counter_type)
    if counter_type == "price-adjustments":
        raise ValueError("price-adjustment batch numbers are checked before use: use take()")
    await uow.gate(("invoice counter", warehouse_id, counter_type))
    return repo.late_number(uow, company_id, warehouse_id, counter_type, PREFIXES[counter_type])


async def take_before_plan(
    uow: UnitOfWork, company_id: int, warehouse_id: int, counter_type: str
) -> str | None:
    """On a unit's re-run, its number now, before it reads and plans stock again (the
    module says why); on a first run ``None``: the number is taken in the closing
    step, so the row is held as briefly as possible when nothing is contended."""
    if uow.attempt == 0:
        return None
    return await take(uow, company_id, warehouse_id, counter_type)
