"""The books of DESIGN.md §5, checked after every scenario, per company."""

from __future__ import annotations

from decimal import Decimal

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from tillbook.db import Database
from tillbook.models import (
    Account,
    Expense,
    GiftCard,
    GiftCardMovement,
    IdempotencyRecord,
    JournalEntry,
    JournalLine,
    Listing,
    LoyaltyAccount,
    LoyaltyMovement,
    LoyaltyProgramme,
    Order,
    OrderItem,
    OutboxEvent,
    Payment,
    PaymentAllocation,
    StockBatch,
    StockMovement,
    StockTransfer,
    StockTransferLine,
    User,
)
from tillbook.unit import PLACEHOLDER_PREFIX, unresolved

D = Decimal
CENT = D("0.01")


def q(value: object) -> Decimal:
    return D(str(value if value is not None else 0)).quantize(D("0.0001"))


async def gl_balance(
    session: AsyncSession, company_id: int, code: str, warehouse_id: int | None = None
) -> Decimal:
    """debit − credit of one account."""
    stmt = (
        select(func.coalesce(func.sum(JournalLine.debit - JournalLine.credit), 0))
        .join(Account, Account.id == JournalLine.account_id)
        .where(JournalLine.company_id == company_id, Account.code == code)
    )
    if warehouse_id is not None:
        stmt = stmt.where(JournalLine.warehouse_id == warehouse_id)
    return q((await session.execute(stmt)).scalar_one())


async def check_books(db: Database, company_id: int) -> None:
    async def run(session: AsyncSession) -> None:
        # 1. every entry balances to the cent and has lines
        rows = (
            await session.execute(
                select(JournalEntry.id, func.sum(JournalLine.debit), func.sum(JournalLine.credit))
                .join(JournalLine, JournalLine.entry_id == JournalEntry.id)
                .where(JournalEntry.company_id == company_id)
                .group_by(JournalEntry.id)
            )
        ).all()
        for entry_id, debit, credit in rows:
            assert q(debit) == q(credit), f"entry {entry_id} unbalanced: {debit} != {credit}"
        entries = (
            await session.execute(
                select(func.count())
                .select_from(JournalEntry)
                .where(JournalEntry.company_id == company_id)
            )
        ).scalar_one()
        assert entries == len(rows), "an entry without lines"

        # 2. GL 11700 = Σ batch values, per warehouse and in total
        layer_values = dict(
            (
                await session.execute(
                    select(StockBatch.warehouse_id, func.sum(StockBatch.value_remaining))
                    .where(StockBatch.company_id == company_id)
                    .group_by(StockBatch.warehouse_id)
                )
            ).all()
        )
        for wh, value in layer_values.items():
            gl = await gl_balance(session, company_id, "11700", wh)
            assert gl == q(value), f"warehouse {wh}: GL 11700 {gl} != layers {value}"
        total_layers = sum((q(v) for v in layer_values.values()), D(0))
        assert await gl_balance(session, company_id, "11700") == total_layers

        # 2b. GL 11750 = the value of the transfers still on the road, so that
        # 11700 + 11750 is all the stock the company owns
        in_transit = (
            await session.execute(
                select(func.coalesce(func.sum(StockTransferLine.value), 0))
                .join(StockTransfer, StockTransfer.id == StockTransferLine.transfer_id)
                .where(StockTransfer.company_id == company_id, StockTransfer.status == "dispatched")
            )
        ).scalar_one()
        transit_gl = await gl_balance(session, company_id, "11750")
        assert transit_gl == q(in_transit), f"GL 11750 {transit_gl} != in transit {in_transit}"
        closed = (
            await session.execute(
                select(
                    StockTransfer.id,
                    StockTransfer.value_sent,
                    StockTransfer.value_received,
                    StockTransfer.value_short,
                    StockTransfer.status,
                ).where(StockTransfer.company_id == company_id)
            )
        ).all()
        for t_id, sent, received, short, status in closed:
            if status == "received":
                assert q(sent) == q(received) + q(short), (
                    f"transfer {t_id}: sent != received + short"
                )

        # 3. stock = Σ movements = Σ batch remaining, per listing (product, warehouse);
        # no movement or batch outside a listing
        listings = (
            await session.execute(
                select(Listing.product_id, Listing.warehouse_id, Listing.current_stock).where(
                    Listing.company_id == company_id
                )
            )
        ).all()
        moves = {
            (pid, wh): total
            for pid, wh, total in await session.execute(
                select(
                    StockMovement.product_id,
                    StockMovement.warehouse_id,
                    func.sum(StockMovement.quantity),
                )
                .where(StockMovement.company_id == company_id)
                .group_by(StockMovement.product_id, StockMovement.warehouse_id)
            )
        }
        layers = {
            (pid, wh): total
            for pid, wh, total in await session.execute(
                select(
                    StockBatch.product_id,
                    StockBatch.warehouse_id,
                    func.sum(StockBatch.quantity_remaining),
                )
                .where(StockBatch.company_id == company_id)
                .group_by(StockBatch.product_id, StockBatch.warehouse_id)
            )
        }
        listed = {(pid, wh) for pid, wh, _ in listings}
        assert set(moves) <= listed, f"movements outside a listing: {set(moves) - listed}"
        assert set(layers) <= listed, f"batches outside a listing: {set(layers) - listed}"
        for pid, wh, stock in listings:
            where = f"product {pid} in warehouse {wh}"
            assert q(stock) == q(moves.get((pid, wh))), f"{where}: stock {stock} != movements"
            assert q(stock) == q(layers.get((pid, wh))), f"{where}: stock {stock} != layers"

        # 4. sub-ledgers: 11500 = Σ customer balances; 21100 = Σ suppliers + pending expenses
        balances = dict(
            (
                await session.execute(
                    select(User.user_type, func.sum(User.balance))
                    .where(User.company_id == company_id)
                    .group_by(User.user_type)
                )
            ).all()
        )
        ar = await gl_balance(session, company_id, "11500")
        assert ar == q(balances.get("customer")), f"GL 11500 {ar} != customers {balances}"
        pending = (
            await session.execute(
                select(
                    func.coalesce(func.sum(func.coalesce(Expense.base_amount, Expense.amount)), 0)
                ).where(Expense.company_id == company_id, Expense.status == "pending")
            )
        ).scalar_one()
        ap = -(await gl_balance(session, company_id, "21100"))
        assert ap == q(balances.get("supplier")) + q(pending), (
            f"GL 21100 {ap} != suppliers {balances.get('supplier')} + pending {pending}"
        )
        # party balance = its sub-ledger lines
        party_lines = dict(
            (
                await session.execute(
                    select(JournalLine.party_id, func.sum(JournalLine.debit - JournalLine.credit))
                    .join(Account, Account.id == JournalLine.account_id)
                    .where(
                        JournalLine.company_id == company_id,
                        JournalLine.party_id.is_not(None),
                        Account.code.in_(["11500", "21100"]),
                    )
                    .group_by(JournalLine.party_id)
                )
            ).all()
        )
        parties = (
            await session.execute(
                select(User.id, User.user_type, User.balance).where(
                    User.company_id == company_id, User.user_type.in_(["customer", "supplier"])
                )
            )
        ).all()
        for pid, kind, balance in parties:
            lines = q(party_lines.get(pid))
            expected = lines if kind == "customer" else -lines
            assert q(balance) == expected, f"party {pid} balance {balance} != lines {expected}"

        # 4a. gift cards and store credit (DESIGN §18): GL 21300 = Σ balances, and
        # each balance = Σ its movements
        card_total = (
            await session.execute(
                select(func.coalesce(func.sum(GiftCard.balance), 0)).where(
                    GiftCard.company_id == company_id
                )
            )
        ).scalar_one()
        owed_on_cards = -(await gl_balance(session, company_id, "21300"))
        assert owed_on_cards == q(card_total), f"GL 21300 {owed_on_cards} != cards {card_total}"
        moved = dict(
            (
                await session.execute(
                    select(GiftCardMovement.card_id, func.sum(GiftCardMovement.amount))
                    .where(GiftCardMovement.company_id == company_id)
                    .group_by(GiftCardMovement.card_id)
                )
            ).all()
        )
        for card_id, balance in (
            await session.execute(
                select(GiftCard.id, GiftCard.balance).where(GiftCard.company_id == company_id)
            )
        ).all():
            assert q(balance) >= 0, f"gift card {card_id} below zero: {balance}"
            assert q(balance) == q(moved.get(card_id)), (
                f"gift card {card_id}: balance {balance} != movements {moved.get(card_id)}"
            )

        # 4a'. loyalty points (DESIGN §18): GL 21400 = Σ points × the current point
        # value; each account's points = Σ its movements' points, and the value its
        # movements carried = its points × the current value (a revaluation moved it)
        value = (
            await session.execute(
                select(LoyaltyProgramme.point_value).where(
                    LoyaltyProgramme.company_id == company_id
                )
            )
        ).scalar_one_or_none()
        accounts = (
            await session.execute(
                select(LoyaltyAccount.id, LoyaltyAccount.points).where(
                    LoyaltyAccount.company_id == company_id
                )
            )
        ).all()
        owed_points = -(await gl_balance(session, company_id, "21400"))
        points_total = sum((int(p) for _a, p in accounts), 0)
        point_value = D(str(value)) if value is not None else D(0)
        assert owed_points == q(points_total * point_value), (
            f"GL 21400 {owed_points} != {points_total} points × {point_value}"
        )
        point_moves = {
            account_id: (int(points), q(worth))
            for account_id, points, worth in (
                await session.execute(
                    select(
                        LoyaltyMovement.account_id,
                        func.sum(LoyaltyMovement.points),
                        func.sum(LoyaltyMovement.value),
                    )
                    .where(LoyaltyMovement.company_id == company_id)
                    .group_by(LoyaltyMovement.account_id)
                )
            ).all()
        }
        for account_id, points in accounts:
            moved_points, moved_value = point_moves.get(account_id, (0, q(0)))
            assert int(points) == moved_points, (
                f"loyalty account {account_id}: {points} points != movements {moved_points}"
            )
            assert moved_value == q(int(points) * point_value), (
                f"loyalty account {account_id}: movements carry {moved_value}, "
                f"{points} points are worth {int(points) * point_value}"
            )

        # 4b. input tax: GL 11800 = Σ tax of purchases − Σ tax of purchase returns, per
        # warehouse (nothing else posts to it), and each order's total = its lines'
        # gross for purchases and their returns (the supplier is owed the gross)
        taxed = (
            await session.execute(
                select(Order.warehouse_id, Order.order_type, func.sum(Order.tax_amount))
                .where(
                    Order.company_id == company_id,
                    Order.order_type.in_(["purchases", "purchase-returns"]),
                )
                .group_by(Order.warehouse_id, Order.order_type)
            )
        ).all()
        input_tax: dict[int, Decimal] = {}
        for wh, otype, tax in taxed:
            sign = 1 if otype == "purchases" else -1
            input_tax[wh] = input_tax.get(wh, q(0)) + sign * q(tax)
        for wh, tax in input_tax.items():
            gl = await gl_balance(session, company_id, "11800", wh)
            assert gl == tax, f"warehouse {wh}: GL 11800 {gl} != purchases' tax {tax}"
        all_tax = sum(input_tax.values(), q(0))
        gl_tax = await gl_balance(session, company_id, "11800")
        assert gl_tax == all_tax, f"GL 11800 {gl_tax} != purchases' tax {all_tax}"
        gross_of = (
            await session.execute(
                select(Order.id, Order.total, Order.tax_amount, Order.subtotal).where(
                    Order.company_id == company_id,
                    Order.order_type.in_(["purchases", "purchase-returns"]),
                )
            )
        ).all()
        for oid, total, tax, subtotal in gross_of:
            assert q(total) == q(subtotal) + q(tax), f"order {oid}: total != subtotal + tax"

        # 5. orders: due = total − paid ≥ 0; paid = Σ allocations
        orders = (
            await session.execute(
                select(
                    Order.id,
                    Order.order_type,
                    Order.total,
                    Order.paid_amount,
                    Order.due_amount,
                    Order.credited_amount,
                ).where(Order.company_id == company_id)
            )
        ).all()
        allocated = dict(
            (
                await session.execute(
                    select(PaymentAllocation.order_id, func.sum(PaymentAllocation.amount))
                    .where(PaymentAllocation.company_id == company_id)
                    .group_by(PaymentAllocation.order_id)
                )
            ).all()
        )
        for oid, otype, total, paid, due, credited in orders:
            assert q(due) == q(total) - q(paid) - q(credited), (
                f"order {oid}: due != total - paid - credited"
            )
            assert q(due) >= 0 and q(paid) >= 0, f"order {oid}: negative due or paid"
            if otype in ("sales", "purchases"):
                assert q(paid) == q(allocated.get(oid)), (
                    f"order {oid}: paid {paid} != allocations {allocated.get(oid)}"
                )

        # 5a. every sale is numbered and names the entry posted for it, whose
        # narration names its number; no stored text holds the placeholder of a number
        # taken by a unit's last statement (``unit.Late``)
        sold = (
            await session.execute(
                select(
                    Order.id,
                    Order.invoice_number,
                    JournalEntry.id,
                    JournalEntry.source_type,
                    JournalEntry.source_id,
                    JournalEntry.narration,
                )
                .outerjoin(
                    JournalEntry,
                    (JournalEntry.id == Order.journal_entry_id)
                    & (JournalEntry.company_id == Order.company_id),
                )
                .where(Order.company_id == company_id, Order.order_type == "sales")
                .where(Order.journal_entry_id.is_not(None))
            )
        ).all()
        for oid, number, entry_id, source_type, source_id, narration in sold:
            assert number, f"sale {oid} has no invoice number"
            assert entry_id is not None, f"sale {oid} names an entry that does not exist"
            assert (source_type, source_id) == ("sale", oid), (
                f"sale {oid} names entry {entry_id}, posted for {source_type} {source_id}"
            )
            assert number in narration, f"entry {entry_id} does not name sale {number}"
        for column, where in (
            (Order.invoice_number, Order.company_id == company_id),
            (JournalEntry.narration, JournalEntry.company_id == company_id),
            (OutboxEvent.payload, OutboxEvent.company_id == company_id),
            (IdempotencyRecord.response_body, IdempotencyRecord.company_id == company_id),
        ):
            # (a customer may be called "~late~…": only the whole pattern counts)
            texts = (
                await session.execute(
                    select(column).where(where, column.contains(PLACEHOLDER_PREFIX))
                )
            ).scalars()
            leaked = [t for t in texts if unresolved(t, "") != t]
            assert not leaked, f"{column} holds a late value's placeholder: {leaked[:3]}"

        # 6. returns (DESIGN.md §5): no line gives back more than it sold, and the
        # returns of a sale refund at most its total, and at most its tax
        lines = (
            await session.execute(
                select(OrderItem.id, OrderItem.base_quantity, OrderItem.returned_quantity).where(
                    OrderItem.company_id == company_id
                )
            )
        ).all()
        for line_id, sold, returned in lines:
            assert 0 <= q(returned) <= q(sold), f"line {line_id}: returned {returned} of {sold}"
        original = aliased(Order)
        refunds = (
            await session.execute(
                select(
                    original.id,
                    original.total,
                    original.tax_amount,
                    func.sum(Order.total),
                    func.sum(Order.tax_amount),
                )
                .join(original, original.id == Order.original_order_id)
                .where(Order.company_id == company_id, Order.order_type == "sales-returns")
                .group_by(original.id, original.total, original.tax_amount)
            )
        ).all()
        for oid, total, tax, refunded, tax_back in refunds:
            assert q(refunded) <= q(total), f"sale {oid}: returns refund {refunded} of {total}"
            assert q(tax_back) <= q(tax), f"sale {oid}: returns give back tax {tax_back} of {tax}"
        # the returns of a purchase take back at most the input tax it recorded
        taken_back = (
            await session.execute(
                select(original.id, original.tax_amount, func.sum(Order.tax_amount))
                .join(original, original.id == Order.original_order_id)
                .where(Order.company_id == company_id, Order.order_type == "purchase-returns")
                .group_by(original.id, original.tax_amount)
            )
        ).all()
        for oid, tax, tax_back in taken_back:
            assert q(tax_back) <= q(tax), f"purchase {oid}: returns take back {tax_back} of {tax}"

        # 8. foreign currency (DESIGN §16): a foreign document's base value still
        # carried is never negative and nothing once nothing is due on it (the other
        # way round does not hold: a due amount worth less than half a cent in the
        # base carries nothing, 0.01 at a rate of 0.2 is 0.002); every
        # converted line names its currency, foreign amount and a positive rate, and
        # the exchange accounts take only base amounts
        foreign_orders = (
            await session.execute(
                select(Order.id, Order.due_amount, Order.base_due, Order.exchange_rate).where(
                    Order.company_id == company_id,
                    Order.currency.is_not(None),
                    Order.order_type.in_(["sales", "purchases"]),
                )
            )
        ).all()
        for oid, due, base_due, rate in foreign_orders:
            assert base_due is not None and q(base_due) >= 0, f"order {oid}: base_due {base_due}"
            assert q(due) != 0 or q(base_due) == 0, (
                f"order {oid}: nothing due but base carried {base_due}"
            )
            assert rate is not None and rate > 0, f"order {oid}: rate {rate}"
        odd = (
            await session.execute(
                select(func.count())
                .select_from(JournalLine)
                .join(Account, Account.id == JournalLine.account_id)
                .where(
                    JournalLine.company_id == company_id,
                    JournalLine.currency.is_not(None),
                    (JournalLine.amount_foreign.is_(None))
                    | (JournalLine.rate.is_(None))
                    | (JournalLine.rate <= 0)
                    | Account.code.in_(["71100", "71200"]),
                )
            )
        ).scalar_one()
        assert odd == 0, f"{odd} converted lines without currency, amount or rate"

        # 7. nothing is given back twice (issue 22): Σ paid back on a sale, by its void
        # and by its returns' refund tenders, ≤ what was paid for it; a voided sale has
        # no return; Σ returned per product of a sale = what its lines say came back
        sales = (
            await session.execute(
                select(Order.id, Order.paid_amount, Order.order_status).where(
                    Order.company_id == company_id, Order.order_type == "sales"
                )
            )
        ).all()
        voided_back = dict(
            (
                await session.execute(
                    select(Payment.order_id, func.sum(Payment.amount))
                    .join(Order, Order.id == Payment.order_id)
                    .where(
                        Payment.company_id == company_id,
                        Payment.payment_type == "out",
                        Order.order_type == "sales",
                    )
                    .group_by(Payment.order_id)
                )
            ).all()
        )
        returns_of = (
            await session.execute(
                select(
                    Order.original_order_id,
                    func.count(),
                    func.sum(Order.paid_amount),
                )
                .where(Order.company_id == company_id, Order.order_type == "sales-returns")
                .where(Order.original_order_id.is_not(None))
                .group_by(Order.original_order_id)
            )
        ).all()
        returned_back = {oid: (n, q(paid)) for oid, n, paid in returns_of}
        for oid, paid, status in sales:
            n_returns, by_returns = returned_back.get(oid, (0, q(0)))
            given = q(voided_back.get(oid)) + by_returns
            assert given <= q(paid), f"sale {oid}: {given} paid back of {paid} paid"
            if status == "cancelled":
                assert n_returns == 0, f"sale {oid}: voided and returned"
        came_back = {
            (oid, pid): qty
            for oid, pid, qty in (
                await session.execute(
                    select(
                        Order.original_order_id,
                        OrderItem.product_id,
                        func.sum(OrderItem.base_quantity),
                    )
                    .join(Order, Order.id == OrderItem.order_id)
                    .where(Order.company_id == company_id, Order.order_type == "sales-returns")
                    .where(Order.original_order_id.is_not(None))
                    .group_by(Order.original_order_id, OrderItem.product_id)
                )
            ).all()
        }
        lines_say = {
            (oid, pid): qty
            for oid, pid, qty in (
                await session.execute(
                    select(
                        OrderItem.order_id,
                        OrderItem.product_id,
                        func.sum(OrderItem.returned_quantity),
                    )
                    .join(Order, Order.id == OrderItem.order_id)
                    .where(Order.company_id == company_id, Order.order_type == "sales")
                    .group_by(OrderItem.order_id, OrderItem.product_id)
                )
            ).all()
        }
        for key, qty in came_back.items():
            assert q(qty) == q(lines_say.get(key)), (
                f"sale:product {key}: returns took {qty}, its lines say {lines_say.get(key)}"
            )

    await db.read(run)
