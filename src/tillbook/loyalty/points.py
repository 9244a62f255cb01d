"""Customers' points, moved beside the entries that move 21400 (DESIGN §18).

Every function here runs in the caller's unit of work. A sale earns
floor(base amount ÷ ``earn_unit``) points on what it comes to less what points
paid for it (their value, Dr 41300 / Cr 21400, is a figure of the sale's own
entry: ``ledger/rules.py``, rule ``sale``, figure ``points``); a tender in the
loyalty mode redeems amount ÷ ``point_value`` points, which must be a whole
number. A return takes back the points its sale earned pro rata by what it
refunds (cumulatively, rounded down: the returns of a sale never take back more
than it earned) at today's value, and a refund in the loyalty mode gives points
back; a void undoes both exactly. Each change is one ``LoyaltyMovement`` naming
the order and the entry, carrying the value 21400 moved for it.

Redeeming is a guarded update (``points >= wanted`` in its WHERE): two sales
racing for a customer's last points cannot both take them (on PostgreSQL the
second waits for the first's row lock and re-reads the balance). The loser's
request is a 422 naming its tender's amount and its unit rolls back. A return
taking back points already spent may leave a balance below zero: the customer
earns it back before they can redeem again.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Annotated, Any

from pydantic import Field
from sqlalchemy import bindparam, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from typing_extensions import TypedDict

from tillbook.errors import invalid
from tillbook.kit import bounds
from tillbook.kit.bounds import MONEY
from tillbook.kit.money import ZERO, money_str
from tillbook.kit.problems import Problems
from tillbook.ledger.fx import Conversion
from tillbook.ledger.service import post
from tillbook.loyalty.programme import Terms, terms
from tillbook.models import LoyaltyAccount, LoyaltyMovement, Order, User
from tillbook.unit import UnitOfWork


class SalePoints(TypedDict):
    """A sale's answer and preview: the points it earns and redeems."""

    points_earned: int
    points_redeemed: int


class ReturnPoints(TypedDict):
    """A sales return's answer: the points it takes back and refunds."""

    points_taken_back: int
    points_refunded: int


class OrderPoints(TypedDict, total=False):
    """What an order's detail says of points (``detail_fields``): a sale's two, a
    sales return's two, none for other orders."""

    points_earned: Annotated[
        int | None, Field(default=None, description="a sale: the loyalty points it earned")
    ]
    points_redeemed: Annotated[
        int | None,
        Field(default=None, description="a sale: the loyalty points its tenders redeemed"),
    ]
    points_taken_back: Annotated[
        int | None,
        Field(default=None, description="a sales return: the points of its sale it took back"),
    ]
    points_refunded: Annotated[
        int | None,
        Field(default=None, description="a sales return: the points its refund gave back"),
    ]


@dataclass(frozen=True)
class Use:
    """One tender in the loyalty mode: ``points`` worth ``amount``."""

    index: int
    amount: Decimal
    points: int

    @property
    def field(self) -> str:
        return f"all_payments.{self.index}.amount"


@dataclass(frozen=True)
class SaleQuote:
    """What a sale does to its customer's points. ``customer_id`` None: nothing
    (no programme, the walk-in customer, nothing earned or redeemed)."""

    customer_id: int | None = None
    uses: tuple[Use, ...] = ()
    earned: int = 0
    earned_value: Decimal = ZERO
    # What ``confirm`` needs to price it again under the programme's lock.
    asks: tuple[tuple[int, Decimal], ...] = field(default=(), repr=False)
    total: Decimal = ZERO
    fx: Conversion | None = None

    @property
    def redeemed(self) -> int:
        return sum(u.points for u in self.uses)

    def answer(self) -> SalePoints:
        """The sale's answer and preview fields."""
        return {"points_earned": self.earned, "points_redeemed": self.redeemed}


def whole_points(amount: Decimal, value: Decimal, field_: str, problems: Problems) -> int | None:
    """``amount`` in points of ``value`` each; not a whole number is a 422 on ``field_``."""
    points = amount / value
    if points != points.to_integral_value():
        problems.add(
            field_,
            f"{money_str(amount)} is not a whole number of points worth {money_str(value)} "
            f"each: redeem a multiple of {money_str(value)}",
        )
        return None
    return int(points)


async def account_of(
    session: AsyncSession, company_id: int, customer_id: int
) -> tuple[int, int] | None:
    """The customer's points account (id, points), or None before their first move."""
    found = (
        await session.execute(
            select(LoyaltyAccount.id, LoyaltyAccount.points).where(
                LoyaltyAccount.company_id == company_id,
                LoyaltyAccount.customer_id == customer_id,
            )
        )
    ).one_or_none()
    return None if found is None else (int(found[0]), int(found[1]))


async def balance(session: AsyncSession, company_id: int, customer_id: int) -> int:
    found = await account_of(session, company_id, customer_id)
    return found[1] if found is not None else 0


def _refusal(customer: User, foreign: bool, found: Terms | None, what: str) -> str | None:
    """Why points cannot move on this document at all, or None."""
    if foreign:
        return (
            "loyalty points are worth the base currency: "
            f"{what} them on a document in the base currency"
        )
    if customer.is_walk_in:
        return (
            "loyalty points belong to a named customer: the walk-in customer has none; "
            "name the customer"
        )
    if found is None:
        return "the company runs no loyalty programme (Settings → Loyalty)"
    return None


async def quote_at(
    found: Terms | None,
    session: AsyncSession,
    company_id: int,
    customer: User,
    asks: Sequence[tuple[int, Decimal]],
    total: Decimal,
    fx: Conversion | None,
    problems: Problems,
) -> SaleQuote:
    """A sale's points at the programme's terms ``found`` (None without one; read
    with the sale's customer, ``orders.lookup.customer``, or under the lock by
    ``confirm``): its tenders in the loyalty mode (``asks``: tender index and
    amount) checked against the customer's points on an unlocked read, and the
    points its ``total`` earns. Problems are added under each tender's field; the
    guarded update in ``record_sale`` has the last word."""
    uses: list[Use] = []
    if asks:
        refused = _refusal(customer, fx is not None, found, "redeem")
        if refused is not None:
            for index, _amount in asks:
                problems.add(f"all_payments.{index}.payment_mode_id", refused)
            return SaleQuote()
        assert found is not None
        held = await balance(session, company_id, customer.id)
        wanted = 0
        for index, amount in asks:
            use_field = f"all_payments.{index}.amount"
            points = whole_points(amount, found.point_value, use_field, problems)
            if points is None:
                continue
            wanted += points
            if wanted > held:
                problems.add(
                    use_field,
                    f"{customer.name} has {max(held, 0)} points, fewer than the {wanted} tendered",
                )
                continue
            uses.append(Use(index, amount, points))
    if found is None or customer.is_walk_in:
        return SaleQuote()
    earned = 0
    if found.active:
        paying = total - sum((amount for _i, amount in asks), ZERO)
        base = paying if fx is None else fx.to_base(paying)
        earned = int(base // found.earn_unit) if base > 0 else 0
    value = earned * found.point_value
    bounds.check("product_items", value, MONEY, "the value of the points this sale earns")
    return SaleQuote(customer.id, tuple(uses), earned, value, tuple(asks), total, fx)


async def confirm(
    session: AsyncSession, company_id: int, customer: User, quote: SaleQuote
) -> SaleQuote:
    """``quote`` priced again with the programme's row locked (shared) until commit:
    what the sale posts is at the terms in force when it commits, never at ones a
    concurrent change has just revalued."""
    if quote.customer_id is None and not quote.asks:
        return quote
    problems = Problems()
    found = await terms(session, company_id, lock=True)
    again = await quote_at(
        found, session, company_id, customer, quote.asks, quote.total, quote.fx, problems
    )
    problems.raise_if_any()
    return again


async def _account(session: AsyncSession, company_id: int, customer_id: int) -> int:
    """The customer's points account, opened now if it is their first movement (two
    first movements at once: the unique key refuses the second, whose unit of
    work runs again and finds the row)."""
    found = await account_of(session, company_id, customer_id)
    if found is not None:
        return found[0]
    account = LoyaltyAccount(company_id=company_id, customer_id=customer_id, points=0)
    session.add(account)
    await session.flush()
    return account.id


async def _add(session: AsyncSession, company_id: int, account_id: int, points: int) -> int:
    """points += ``points`` (unguarded: earning, giving back, taking back); the new
    balance."""
    return int(
        (
            await session.execute(
                update(LoyaltyAccount)
                .where(LoyaltyAccount.company_id == company_id, LoyaltyAccount.id == account_id)
                .values(points=LoyaltyAccount.points + points)
                .returning(LoyaltyAccount.points)
            )
        ).scalar_one()
    )


@dataclass(frozen=True)
class Where:
    """The document a movement belongs to."""

    company_id: int
    warehouse_id: int | None
    order_id: int | None
    entry_id: int | None
    created_by: int | None


def _move(
    session: AsyncSession,
    at: Where,
    account_id: int,
    kind: str,
    points: int,
    points_after: int,
    value: Decimal,
) -> None:
    session.add(
        LoyaltyMovement(
            company_id=at.company_id,
            account_id=account_id,
            warehouse_id=at.warehouse_id,
            kind=kind,
            points=points,
            points_after=points_after,
            value=value,
            order_id=at.order_id,
            journal_entry_id=at.entry_id,
            created_by=at.created_by,
        )
    )


async def record_sale(uow: UnitOfWork, quote: SaleQuote, at: Where) -> None:
    """The sale's redeemed points off the customer's account (guarded), then its
    earned points on it (so points earned by a sale never pay for it)."""
    if quote.customer_id is None or not (quote.uses or quote.earned):
        return
    session = uow.session
    account_id = await _account(session, at.company_id, quote.customer_id)
    for use in quote.uses:
        left = (
            await session.execute(
                update(LoyaltyAccount)
                .where(
                    LoyaltyAccount.company_id == at.company_id,
                    LoyaltyAccount.id == account_id,
                    LoyaltyAccount.points >= use.points,
                )
                .values(points=LoyaltyAccount.points - use.points)
                .returning(LoyaltyAccount.points)
            )
        ).scalar_one_or_none()
        if left is None:
            raise invalid(
                use.field,
                f"the customer's points no longer cover {use.points}: another sale spent "
                "them first",
            )
        _move(session, at, account_id, "redeem", -use.points, int(left), -use.amount)
    if quote.earned:
        left = await _add(session, at.company_id, account_id, quote.earned)
        _move(session, at, account_id, "earn", quote.earned, left, quote.earned_value)


# What an order did to points, by kind: prebuilt, so that an order's detail read
# nests it (``orders.views.read_detail``).
ORDER_POINTS = (
    select(LoyaltyMovement.kind, func.sum(LoyaltyMovement.points).label("points"))
    .where(
        LoyaltyMovement.order_id == bindparam("order_id"),
        LoyaltyMovement.company_id == bindparam("company_id"),
    )
    .group_by(LoyaltyMovement.kind)
)


def moved_by_kind(rows: Sequence[Mapping[Any, Any]]) -> dict[str, int]:
    """``ORDER_POINTS``'s rows as points by kind."""
    return {row["kind"]: int(row["points"]) for row in rows}


async def order_points(session: AsyncSession, order: Order) -> dict[str, int]:
    """What an order did to points, by kind (a sale's answer replayed, its detail)."""
    params = {"order_id": order.id, "company_id": order.company_id}
    return moved_by_kind((await session.execute(ORDER_POINTS, params)).mappings().all())


async def sale_answer(session: AsyncSession, order: Order) -> SalePoints:
    """``SaleQuote.answer`` of a sale already recorded."""
    return _sale_points(await order_points(session, order))


def _sale_points(moved: dict[str, int]) -> SalePoints:
    return {"points_earned": moved.get("earn", 0), "points_redeemed": -moved.get("redeem", 0)}


def detail_fields(order_type: str, moved: dict[str, int]) -> OrderPoints:
    """What an order's detail view says of points, given what it moved
    (``order_points``): a sale what it earned and redeemed (a void does not change
    what it did then), a sales return what it took back and refunded."""
    if order_type == "sales":
        sold = _sale_points(moved)
        return {"points_earned": sold["points_earned"], "points_redeemed": sold["points_redeemed"]}
    if order_type == "sales-returns":
        return {
            "points_taken_back": -moved.get("return", 0),
            "points_refunded": moved.get("refund", 0),
        }
    return {}


# --- returns ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ReturnQuote:
    """What a sales return does to its customer's points: ``gives`` (refund tenders
    in the loyalty mode) back on, ``back`` (of what its sale earned) off."""

    customer_id: int | None = None
    gives: tuple[Use, ...] = ()
    back: int = 0
    back_value: Decimal = ZERO

    def answer(self) -> ReturnPoints:
        return {
            "points_taken_back": self.back,
            "points_refunded": sum(u.points for u in self.gives),
        }


async def _earned_and_taken(session: AsyncSession, original: Order) -> tuple[int, int, Decimal]:
    """What ``original`` earned, what its returns took back so far, and what they
    came to."""
    earned = (
        await session.execute(
            select(func.coalesce(func.sum(LoyaltyMovement.points), 0)).where(
                LoyaltyMovement.company_id == original.company_id,
                LoyaltyMovement.order_id == original.id,
                LoyaltyMovement.kind == "earn",
            )
        )
    ).scalar_one()
    returns = select(Order.id).where(
        Order.company_id == original.company_id,
        Order.original_order_id == original.id,
        Order.order_type == "sales-returns",
    )
    taken = (
        await session.execute(
            select(func.coalesce(func.sum(LoyaltyMovement.points), 0)).where(
                LoyaltyMovement.company_id == original.company_id,
                LoyaltyMovement.order_id.in_(returns),
                LoyaltyMovement.kind == "return",
            )
        )
    ).scalar_one()
    returned = (
        await session.execute(
            select(func.coalesce(func.sum(Order.total), 0)).where(
                Order.company_id == original.company_id,
                Order.original_order_id == original.id,
                Order.order_type == "sales-returns",
            )
        )
    ).scalar_one()
    return int(earned), -int(taken), Decimal(returned)


async def quote_return(
    session: AsyncSession,
    company_id: int,
    customer: User,
    asks: Sequence[tuple[int, Decimal]],
    *,
    original: Order | None,
    total: Decimal,
    foreign: bool,
    problems: Problems,
) -> ReturnQuote:
    """A sales return's points, before it is written (its own total not yet among
    its sale's returns): refund tenders in the loyalty mode checked (whole points,
    a named customer, the base currency), and the points its sale earned taken
    back by the share refunded: floor(earned × refunded so far ÷ the sale's
    total) less what earlier returns took. The programme is locked (shared)."""
    found = await terms(session, company_id, lock=True)
    gives: list[Use] = []
    if asks:
        refused = _refusal(customer, foreign, found, "refund")
        if refused is not None:
            for index, _amount in asks:
                problems.add(f"all_payments.{index}.payment_mode_id", refused)
            return ReturnQuote()
        assert found is not None
        for index, amount in asks:
            points = whole_points(
                amount, found.point_value, f"all_payments.{index}.amount", problems
            )
            if points is not None:
                gives.append(Use(index, amount, points))
    if found is None:
        return ReturnQuote()
    back = 0
    if original is not None and original.total > 0:
        earned, taken, returned = await _earned_and_taken(session, original)
        if earned > 0:
            share = min((returned + total) / original.total, Decimal(1))
            back = max(int(earned * share) - taken, 0)
    if not gives and not back:
        return ReturnQuote()
    value = back * found.point_value
    return ReturnQuote(customer.id, tuple(gives), back, value)


async def record_return(uow: UnitOfWork, quote: ReturnQuote, at: Where) -> None:
    """The refund's points onto the customer's account and the sale's earned share
    off it (which may leave it below zero: they spent the points already)."""
    if quote.customer_id is None:
        return
    session = uow.session
    account_id = await _account(session, at.company_id, quote.customer_id)
    for use in quote.gives:
        left = await _add(session, at.company_id, account_id, use.points)
        _move(session, at, account_id, "refund", use.points, left, use.amount)
    if quote.back:
        left = await _add(session, at.company_id, account_id, -quote.back)
        _move(session, at, account_id, "return", -quote.back, left, -quote.back_value)


# --- voids -----------------------------------------------------------------------------


async def void_back(uow: UnitOfWork, at: Where, sale_id: int, today: dt.date) -> None:
    """A voided sale's points go back as they were: the earned ones off, the redeemed
    ones on. The void's reversing entry moved 21400 by the values of the sale's
    day; when the point value has changed since, the difference is posted
    (``loyalty_revaluation``) so 21400 owes today's value of every point."""
    session = uow.session
    moved = (
        await session.execute(
            select(LoyaltyMovement.account_id, LoyaltyMovement.points, LoyaltyMovement.value)
            .where(
                LoyaltyMovement.company_id == at.company_id,
                LoyaltyMovement.order_id == sale_id,
                LoyaltyMovement.kind.in_(("earn", "redeem")),
            )
            .order_by(LoyaltyMovement.id)
        )
    ).all()
    if not moved:
        return
    found = await terms(session, at.company_id, lock=True)
    assert found is not None  # the sale moved points under this programme
    difference = ZERO
    for account_id, points, value in moved:
        back = -int(points)
        now = back * found.point_value
        left = await _add(session, at.company_id, account_id, back)
        _move(session, at, account_id, "void", back, left, now)
        difference += now + Decimal(value)
    if difference:
        await post(
            uow,
            company_id=at.company_id,
            warehouse_id=at.warehouse_id,
            rule="loyalty_revaluation",
            figures={"amount": difference},
            narration="Loyalty points of a voided sale at today's point value",
            field="order_id",
            source_type="sale_void",
            source_id=sale_id,
            entry_date=today,
            created_by=at.created_by,
        )
