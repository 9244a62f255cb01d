"""Till shifts and the cash drawer: open, cash in and out, X report, close with a Z.

A shift is one register's drawer from its opening float to its counted close. The
opening float is a count, not a posting: that cash is already on the drawer mode's
account (11101 for the mode coded ``cash``). Sales, returns, voids and payments
made while the shift is open carry it (``orders/shifts.py``), and with them their
tenders and refunds; what the drawer should hold of each payment mode is
computed from those (``expected``), never kept as a running figure.

Cash in and out of the drawer is posted as it happens: petty cash paid out is an
expense on its category's account (rule ``expense_paid``, with an ``expenses``
row like any other paid expense), a float top-up from the bank or a drop of
takings to it moves money between the drawer mode's account and the other mode's
(rule ``drawer_transfer``). The close takes the count of each payment mode; what
it differs from the expected amount is posted between the mode's account and
52500 Cash Over/Short (rule ``cash_over_short``), and the Z report is answered.

The shift row is locked by each of these, so two tills closing one shift, or a
cash movement racing the close, run one after the other: the second finds the
shift closed (409).

The answers' shapes are declared here (``kit/shapes.py``): a shift in a list
(``ShiftHead``) and its X or Z report (``ShiftReport``), what every write here
answers; ``api/public/openapi.py`` puts them in the envelope.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from decimal import Decimal
from typing import Annotated, Any, Literal, NotRequired, cast

from pydantic import Field
from sqlalchemy import func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession
from typing_extensions import TypedDict

from tillbook.audit.setup_records import iso
from tillbook.auth.context import AuthContext
from tillbook.currency import rates
from tillbook.errors import Conflict, NotFound, invalid
from tillbook.kit.bounds import MONEY, exceeds
from tillbook.kit.money import ZERO, money_str, number
from tillbook.kit.problems import Problems
from tillbook.kit.refs import ref_to_id
from tillbook.kit.shapes import DateTimeStr, MoneyStr, answer
from tillbook.ledger import chart
from tillbook.ledger.fx import Held, to_base
from tillbook.ledger.service import Pair, post
from tillbook.models import (
    Account,
    Expense,
    JournalLine,
    Order,
    OrderItem,
    Payment,
    PaymentMode,
    Register,
    Shift,
    ShiftCash,
    ShiftCount,
    User,
)
from tillbook.models.base import utcnow
from tillbook.orders import lookup
from tillbook.payments import expenses
from tillbook.payments.schemas import ShiftCashIn, ShiftCloseIn, ShiftIn
from tillbook.unit import UnitOfWork


@answer
class ShiftHead(TypedDict):
    id: int
    register: str
    status: Literal["open", "closed"]
    cash_payment_mode_id: int
    opening_float: MoneyStr
    opened_by: int | None
    opened_at: DateTimeStr
    closed_at: DateTimeStr | None
    notes: str
    reference: str | None


@answer
class OrderFigures(TypedDict):
    count: int
    total: MoneyStr
    tax_amount: MoneyStr
    discount: MoneyStr


@answer
class TaxByRate(TypedDict):
    rate: float
    net: MoneyStr
    tax: MoneyStr


class ModeRef(TypedDict):
    payment_mode_id: int
    code: str
    name: str
    # A foreign drawer: its figures are in that currency.
    currency: NotRequired[
        Annotated[str, Field(description="the mode's currency, when it is not the base one")]
    ]


@answer
class ShiftTender(ModeRef):
    taken: MoneyStr
    refunded: MoneyStr  # to customers (returns, voids)
    paid_to_suppliers: MoneyStr  # supplier payments out of the till: not refunds
    net: MoneyStr


@answer
class ShiftCashItem(TypedDict):
    id: int
    direction: Literal["in", "out"]
    amount: MoneyStr
    reason: str
    expense_id: int | None
    payment_mode_id: int | None
    journal_entry_id: int | None


@answer
class ShiftExpected(ModeRef):
    expected: MoneyStr
    counted: MoneyStr | None
    difference: MoneyStr | None


@answer
class ShiftReport(ShiftHead):
    report: Literal["X", "Z"]
    sales: OrderFigures
    returns: OrderFigures
    voids: OrderFigures
    tax_by_rate: list[TaxByRate]
    tenders: list[ShiftTender]
    refunds_total: MoneyStr
    supplier_payments_total: MoneyStr
    cash_movements: list[ShiftCashItem]
    expected: list[ShiftExpected]
    over_short: MoneyStr | None
    journal_entry_id: int | None


async def _shift(session: AsyncSession, key: AuthContext, ref: str, *, lock: bool) -> Shift:
    """The key's warehouse's shift ``ref``: its id, xid or register reference
    (``R1-S000007``; another warehouse's is not found)."""
    id_ = ref_to_id(ref)
    query = select(Shift).where(
        Shift.company_id == key.company_id,
        Shift.id == id_ if id_ is not None else Shift.reference == ref,
        Shift.warehouse_id == key.warehouse_id,
    )
    if lock:
        query = query.with_for_update()
    shift = None
    if id_ is not None or "-" in ref:
        shift = (await session.execute(query)).scalar_one_or_none()
    if shift is None:
        raise NotFound("shift not found")
    return shift


def _still_open(shift: Shift) -> None:
    if shift.status != "open":
        raise Conflict(f"shift {shift.id} is closed")


async def open_shift(uow: UnitOfWork, key: AuthContext, body: ShiftIn) -> ShiftReport:
    session = uow.session
    problems = Problems()
    field = "cash_payment_mode_id"
    modes = await lookup.payment_modes(
        session,
        key.company_id,
        [(field, body.cash_payment_mode_id if body.cash_payment_mode_id is not None else "cash")],
        problems,
        version=key.reference_version,
    )
    problems.raise_if_any()
    if body.reference is not None:
        # A register's opening sent again (its queue retried, or it was wiped): the
        # shift it opened, whatever became of it since. Two at once: the unique
        # reference makes the second run again and land here.
        earlier = await session.scalar(
            select(Shift).where(
                Shift.company_id == key.company_id,
                Shift.warehouse_id == key.warehouse_id,
                Shift.reference == body.reference,
            )
        )
        if earlier is not None:
            return await report(session, earlier)
    register = body.register_name
    if key.register_id is not None and "register_name" not in body.model_fields_set:
        # A paired register's drawer is its own (by prefix): two registers of one
        # branch each hold an open shift.
        register = (
            await session.scalar(
                select(Register.prefix).where(
                    Register.company_id == key.company_id, Register.id == key.register_id
                )
            )
            or register
        )
    taken = await session.scalar(
        select(Shift.id).where(
            Shift.company_id == key.company_id,
            Shift.warehouse_id == key.warehouse_id,
            Shift.register == register,
            Shift.status == "open",
        )
    )
    if taken is not None:
        raise Conflict(f"register {register!r} already has an open shift ({taken})")
    shift = Shift(
        company_id=key.company_id,
        warehouse_id=key.warehouse_id,
        register=register,
        reference=body.reference,
        status="open",
        cash_mode_id=modes[field].id,
        opening_float=body.opening_float,
        opened_by=key.user_id,
        opened_at=utcnow(),
        sales_count=0,
        notes=body.notes or "",
    )
    session.add(shift)
    await session.flush()
    return await report(session, shift)


async def move_cash(uow: UnitOfWork, key: AuthContext, ref: str, body: ShiftCashIn) -> ShiftReport:
    session = uow.session
    shift = await _shift(session, key, ref, lock=True)
    _still_open(shift)
    problems = Problems()
    if body.direction == "in" and body.expense_category_id is not None:
        problems.add(
            "expense_category_id", "cash paid in comes from a payment mode, not an expense"
        )
    if body.direction == "in" and body.payment_mode_id is None:
        problems.add("payment_mode_id", "name the payment mode the cash comes from (the bank)")
    if body.direction == "out" and (body.expense_category_id is None) == (
        body.payment_mode_id is None
    ):
        problems.add(
            "expense_category_id",
            "cash paid out goes either to an expense category (petty cash) or to a payment "
            "mode (payment_mode_id: takings to the bank): name exactly one",
        )
    # Cash taken out is in the drawer: more than it should hold is a mistyped amount;
    # and a drawer past what the books can count would leave a shift no count closes.
    in_drawer = (await _expected(session, shift)).get(shift.cash_mode_id, ZERO)
    if body.direction == "out" and body.amount > in_drawer:
        problems.add(
            "amount",
            f"the drawer should hold {money_str(in_drawer)}; "
            f"{money_str(body.amount)} cannot be taken out of it",
        )
    too_much = exceeds(in_drawer + body.amount, MONEY, "the cash in the drawer")
    if body.direction == "in" and too_much:
        problems.add("amount", too_much)
    problems.raise_if_any()
    drawer = await _mode(session, key.company_id, shift.cash_mode_id)
    today = dt.date.today()
    movement = ShiftCash(
        company_id=key.company_id,
        shift_id=shift.id,
        direction=body.direction,
        amount=body.amount,
        reason=body.reason,
        created_by=key.user_id,
        created_at=utcnow(),
    )
    common: dict[str, Any] = dict(
        company_id=key.company_id,
        warehouse_id=key.warehouse_id,
        field="amount",
        entry_date=today,
        created_by=key.user_id,
    )
    if body.expense_category_id is not None:
        category = await expenses.category(
            session, key.company_id, body.expense_category_id, "expense_category_id", problems
        )
        problems.raise_if_any()
        assert category is not None
        expense = Expense(
            company_id=key.company_id,
            warehouse_id=key.warehouse_id,
            expense_category_id=category.id,
            amount=body.amount,
            date=today,
            payment_mode_id=drawer.id,
            status="paid",
            reference=f"shift {shift.id}",
            notes=body.reason,
            created_by=key.user_id,
        )
        session.add(expense)
        await session.flush()
        expense.journal_entry_id = await post(
            uow,
            rule="expense_paid",
            figures={
                "expense": [(category.account_code, body.amount)],
                "tenders": [(drawer.account_code, body.amount)],
            },
            narration=f"Petty cash from shift {shift.id} ({category.name}): {body.reason}",
            source_type="expense",
            source_id=expense.id,
            **common,
        )
        movement.expense_id = expense.id
        movement.journal_entry_id = expense.journal_entry_id
    else:
        modes = await lookup.payment_modes(
            session,
            key.company_id,
            [("payment_mode_id", body.payment_mode_id or "")],
            problems,
            version=key.reference_version,
        )
        problems.raise_if_any()
        other = modes["payment_mode_id"]
        if other.id == drawer.id:
            raise invalid("payment_mode_id", "is the drawer's own payment mode")
        signed = body.amount if body.direction == "in" else -body.amount
        movement.payment_mode_id = other.id
        session.add(movement)
        await session.flush()
        movement.journal_entry_id = await post(
            uow,
            rule="drawer_transfer",
            figures={
                "drawer": [(drawer.account_code, signed)],
                "counter": [(other.account_code, signed)],
            },
            narration=(
                f"Float top-up of shift {shift.id} from {other.name}: {body.reason}"
                if body.direction == "in"
                else f"Cash from shift {shift.id} to {other.name}: {body.reason}"
            ),
            source_type="shift_cash",
            source_id=movement.id,
            **common,
        )
    session.add(movement)
    await session.flush()
    return await report(session, shift)


async def close_shift(
    uow: UnitOfWork, key: AuthContext, ref: str, body: ShiftCloseIn
) -> ShiftReport:
    session = uow.session
    shift = await _shift(session, key, ref, lock=True)
    _still_open(shift)
    problems = Problems()
    fields = [f"counted.{i}.payment_mode_id" for i in range(len(body.counted))]
    modes = await lookup.payment_modes(
        session,
        key.company_id,
        [(f, c.payment_mode_id) for f, c in zip(fields, body.counted, strict=True)],
        problems,
        version=key.reference_version,
    )
    seen: dict[int, str] = {}
    for f in fields:
        mode = modes.get(f)
        if mode is None:
            continue
        if mode.id in seen:
            problems.add(f, f"payment mode {mode.code!r} is already counted in {seen[mode.id]}")
        seen.setdefault(mode.id, f)
    problems.raise_if_any()
    if shift.cash_mode_id not in seen:
        raise invalid("counted", "count the drawer's cash (its payment mode) to close the shift")

    expected = await _expected(session, shift)
    differences: list[Pair] = []
    counts = []
    today = dt.date.today()
    for f, count in zip(fields, body.counted, strict=True):
        mode = modes[f]
        want = expected.get(mode.id, ZERO)
        counts.append(
            ShiftCount(
                company_id=shift.company_id,
                shift_id=shift.id,
                payment_mode_id=mode.id,
                expected=want,
                counted=count.amount,
            )
        )
        if count.amount == want:
            continue
        if mode.currency is None:
            differences.append((mode.account_code, count.amount - want))
            continue
        # A foreign drawer is counted in its currency; the difference is booked at
        # today's rate, and the line keeps the foreign amount.
        found = await rates.rate_on(session, key.company_id, mode.currency, today)
        if found is None:
            raise invalid(
                f.replace("payment_mode_id", "amount"),
                f"there is no {mode.currency} rate on or before {today} to book the difference",
            )
        gap = count.amount - want
        worth = to_base(abs(gap), found[1])
        differences.append(
            (
                mode.account_code,
                worth if gap > 0 else -worth,
                Held(mode.currency, abs(gap), found[1]),
            )
        )
    total = sum((d[1] for d in differences), ZERO)
    shift.journal_entry_id = await post(
        uow,
        company_id=key.company_id,
        warehouse_id=key.warehouse_id,
        rule="cash_over_short",
        figures={"differences": differences, "total": total},
        narration=f"Shift {shift.id} ({shift.register}) closed: over/short {total}",
        field="counted",
        source_type="shift",
        source_id=shift.id,
        entry_date=dt.date.today(),
        created_by=key.user_id,
    )
    session.add_all(counts)
    shift.status = "closed"
    shift.closed_at = utcnow()
    shift.closed_by = key.user_id
    if body.notes:
        shift.notes = f"{shift.notes}\n{body.notes}" if shift.notes else body.notes
    await session.flush()
    return await report(session, shift)


async def read_shift(session: AsyncSession, key: AuthContext, ref: str) -> ShiftReport:
    return await report(session, await _shift(session, key, ref, lock=False))


async def list_shifts(
    session: AsyncSession, key: AuthContext, opened_by: int | None = None
) -> list[ShiftHead]:
    """The warehouse's open shifts and the 50 last closed ones, newest first (those
    ``opened_by`` one staff member: a cashier's own)."""
    mine = () if opened_by is None else (Shift.opened_by == opened_by,)
    rows = (
        await session.execute(
            select(Shift)
            .where(
                Shift.company_id == key.company_id, Shift.warehouse_id == key.warehouse_id, *mine
            )
            .order_by(Shift.id.desc())
            .limit(50)
        )
    ).scalars()
    return [_head(s) for s in rows]


# --- figures ---------------------------------------------------------------------------


async def _mode(session: AsyncSession, company_id: int, mode_id: int) -> lookup.Mode:
    row = (
        await session.execute(
            select(PaymentMode.id, PaymentMode.code, PaymentMode.name, Account.code)
            .join(
                Account,
                (Account.id == PaymentMode.account_id)
                & (Account.company_id == PaymentMode.company_id),
            )
            .where(PaymentMode.id == mode_id, PaymentMode.company_id == company_id)
        )
    ).one()
    return lookup.Mode(row[0], row[1], row[2], row[3])


async def _flows(
    session: AsyncSession, shift: Shift
) -> dict[int, tuple[Decimal, Decimal, Decimal]]:
    """Payment mode -> (taken, refunded to customers, paid to suppliers) by the
    shift's payments: money out of the till to a supplier is not a refund, and the
    Z report shows the two apart."""
    out: dict[int, list[Decimal]] = defaultdict(lambda: [ZERO, ZERO, ZERO])
    rows = await session.execute(
        select(
            Payment.payment_mode_id,
            Payment.payment_type,
            User.user_type,
            Payment.amount,
            Payment.amount_foreign,
            Payment.currency,
            Payment.exchange_rate,
            PaymentMode.currency,
        )
        .join(User, (User.id == Payment.user_id) & (User.company_id == Payment.company_id))
        .join(
            PaymentMode,
            (PaymentMode.id == Payment.payment_mode_id)
            & (PaymentMode.company_id == Payment.company_id),
        )
        .where(Payment.company_id == shift.company_id, Payment.shift_id == shift.id)
    )
    for mode_id, kind, party, amount, foreign, currency, rate, held in rows:
        slot = 0 if kind == "in" else (2 if party == "supplier" else 1)
        out[mode_id][slot] += in_drawer(amount, foreign, currency, rate, held)
    return {m: (v[0], v[1], v[2]) for m, v in out.items()}


def in_drawer(
    amount: Decimal,
    foreign: Decimal | None,
    currency: str | None,
    rate: Decimal | None,
    held: str | None,
) -> Decimal:
    """What a payment put into (or took out of) its mode's drawer, in the money the
    drawer holds (DESIGN §16): foreign cash taken on a base sale counts as that cash;
    a foreign document's payment into a base drawer at its worth in the base; a
    drawer of the document's own currency, its amount."""
    if foreign is not None:
        return foreign
    if currency is not None and held is None and rate is not None:
        return to_base(amount, rate)
    return amount


async def _tenders(session: AsyncSession, shift: Shift) -> dict[int, tuple[Decimal, Decimal]]:
    """Payment mode -> (taken, given back: refunds and supplier payments)."""
    return {m: (a, b + c) for m, (a, b, c) in (await _flows(session, shift)).items()}


async def _cash(session: AsyncSession, shift: Shift) -> list[ShiftCash]:
    return list(
        (
            await session.execute(
                select(ShiftCash)
                .where(ShiftCash.company_id == shift.company_id, ShiftCash.shift_id == shift.id)
                .order_by(ShiftCash.id)
            )
        ).scalars()
    )


async def _expected(session: AsyncSession, shift: Shift) -> dict[int, Decimal]:
    """What the drawer should hold per payment mode: tenders taken less refunds given,
    and for the drawer's own mode the opening float and the cash put in less taken out."""
    expected = {m: taken - given for m, (taken, given) in (await _tenders(session, shift)).items()}
    # Change handed back in the base for foreign cash came out of the drawer's cash.
    change = await session.scalar(
        select(func.coalesce(func.sum(Payment.change_given), 0)).where(
            Payment.company_id == shift.company_id, Payment.shift_id == shift.id
        )
    )
    cash = shift.opening_float - Decimal(change or 0)
    for movement in await _cash(session, shift):
        cash += movement.amount if movement.direction == "in" else -movement.amount
    expected[shift.cash_mode_id] = expected.get(shift.cash_mode_id, ZERO) + cash
    return expected


async def _over_short(session: AsyncSession, shift: Shift) -> Decimal:
    """In the base, as the close booked it on 52500 (an over credits it): foreign
    drawers' differences were valued at the day's rate."""
    if shift.journal_entry_id is None:
        return ZERO
    found = await session.scalar(
        select(func.coalesce(func.sum(JournalLine.credit - JournalLine.debit), 0))
        .join(
            Account,
            (Account.id == JournalLine.account_id) & (Account.company_id == JournalLine.company_id),
        )
        .where(
            JournalLine.company_id == shift.company_id,
            JournalLine.entry_id == shift.journal_entry_id,
            Account.code == chart.CASH_OVER_SHORT,
        )
    )
    return Decimal(found or 0)


async def shift_branch(
    session: AsyncSession, company_id: int, shift_id: int
) -> tuple[int, int | None] | None:
    """A shift's (branch, opener), None when the company has no such shift."""
    row = (
        await session.execute(
            select(Shift.warehouse_id, Shift.opened_by).where(
                Shift.id == shift_id, Shift.company_id == company_id
            )
        )
    ).first()
    return None if row is None else (row[0], row[1])


def _head(shift: Shift) -> ShiftHead:
    opened_at = iso(shift.opened_at)
    assert opened_at is not None  # the column is NOT NULL
    return {
        "id": shift.id,
        "register": shift.register,
        # The column holds these codes only (its writers are typed with them).
        "status": cast(Literal["open", "closed"], shift.status),
        "cash_payment_mode_id": shift.cash_mode_id,
        "opening_float": money_str(shift.opening_float),
        "opened_by": shift.opened_by,
        "opened_at": opened_at,
        "closed_at": iso(shift.closed_at),
        "notes": shift.notes,
        "reference": shift.reference,
    }


async def _orders(session: AsyncSession, *conditions: Any) -> OrderFigures:
    row = (
        await session.execute(
            select(
                func.count(),
                func.coalesce(func.sum(Order.total), 0),
                func.coalesce(func.sum(Order.tax_amount), 0),
                func.coalesce(func.sum(Order.discount), 0),
            ).where(*conditions)
        )
    ).one()
    return {
        "count": int(row[0]),
        "total": money_str(Decimal(row[1])),
        "tax_amount": money_str(Decimal(row[2])),
        "discount": money_str(Decimal(row[3])),
    }


async def report(session: AsyncSession, shift: Shift) -> ShiftReport:
    """The X report of an open shift, the Z report of a closed one: the same figures,
    with the counts and the over/short once closed."""
    # A sale voided in this shift is left out (its refund is in this shift's tenders);
    # one voided later, in another shift or none, stays: a Z report never changes.
    sold = (
        Order.company_id == shift.company_id,
        Order.shift_id == shift.id,
        Order.order_type == "sales",
        or_(
            Order.order_status != "cancelled",
            Order.void_shift_id.is_(None),
            Order.void_shift_id != shift.id,
        ),
    )
    returned = (
        Order.company_id == shift.company_id,
        Order.shift_id == shift.id,
        Order.order_type == "sales-returns",
    )
    by_rate: dict[Decimal, list[Decimal]] = defaultdict(lambda: [ZERO, ZERO])
    for conditions, sign in ((sold, 1), (returned, -1)):
        rows = await session.execute(
            select(OrderItem.tax_rate, func.sum(OrderItem.subtotal), func.sum(OrderItem.tax_amount))
            .join(
                Order, (Order.id == OrderItem.order_id) & (Order.company_id == OrderItem.company_id)
            )
            .where(*conditions)
            .group_by(OrderItem.tax_rate)
        )
        for rate, net, tax in rows:
            key = Decimal(rate).normalize()
            by_rate[key][0] += sign * Decimal(net or 0)
            by_rate[key][1] += sign * Decimal(tax or 0)
    modes = {
        m.id: (m.code, m.name, m.currency)
        for m in (
            await session.execute(
                select(PaymentMode).where(PaymentMode.company_id == shift.company_id)
            )
        ).scalars()
    }
    flows = await _flows(session, shift)
    expected = await _expected(session, shift)
    counted = {
        c.payment_mode_id: c
        for c in (
            await session.execute(
                select(ShiftCount).where(
                    ShiftCount.company_id == shift.company_id, ShiftCount.shift_id == shift.id
                )
            )
        ).scalars()
    }
    closed = shift.status == "closed"
    over_short = await _over_short(session, shift)

    def mode_row(mode_id: int) -> ModeRef:
        code, name, currency = modes.get(mode_id, ("", "", None))
        row: ModeRef = {"payment_mode_id": mode_id, "code": code, "name": name}
        if currency is not None:  # a foreign drawer: its figures are in that currency
            row["currency"] = currency
        return row

    expected_rows: list[ShiftExpected] = []
    for mode_id in sorted(set(expected) | set(counted)):
        count = counted.get(mode_id)
        want = count.expected if count is not None else expected.get(mode_id, ZERO)
        expected_rows.append(
            {
                **mode_row(mode_id),
                "expected": money_str(want),
                "counted": money_str(count.counted) if count is not None else None,
                "difference": money_str(count.counted - count.expected) if count else None,
            }
        )
    return {
        **_head(shift),
        "report": "Z" if closed else "X",
        "sales": await _orders(session, *sold),
        "returns": await _orders(session, *returned),
        "voids": await _orders(
            session, Order.company_id == shift.company_id, Order.void_shift_id == shift.id
        ),
        "tax_by_rate": [
            {"rate": number(rate), "net": money_str(v[0]), "tax": money_str(v[1])}
            for rate, v in sorted(by_rate.items())
        ],
        "tenders": [
            {
                **mode_row(mode_id),
                "taken": money_str(taken),
                "refunded": money_str(refunded),
                "paid_to_suppliers": money_str(suppliers),
                "net": money_str(taken - refunded - suppliers),
            }
            for mode_id, (taken, refunded, suppliers) in sorted(flows.items())
        ],
        "refunds_total": money_str(sum((f[1] for f in flows.values()), ZERO)),
        "supplier_payments_total": money_str(sum((f[2] for f in flows.values()), ZERO)),
        "cash_movements": [
            {
                "id": m.id,
                "direction": cast(Literal["in", "out"], m.direction),
                "amount": money_str(m.amount),
                "reason": m.reason,
                "expense_id": m.expense_id,
                "payment_mode_id": m.payment_mode_id,
                "journal_entry_id": m.journal_entry_id,
            }
            for m in await _cash(session, shift)
        ],
        "expected": expected_rows,
        "over_short": money_str(over_short) if closed else None,
        "journal_entry_id": shift.journal_entry_id,
    }
