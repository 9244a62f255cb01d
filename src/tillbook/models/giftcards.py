"""Gift cards and store credit (DESIGN §18): money the shop owes in goods.

One table holds both: a gift card (``kind`` ``card``) is a bearer balance found by
its code, a customer's store credit (``kind`` ``credit``) is a balance found by the
customer. ``lookup_key`` is unique per company and is how either is found: for a
card the keyed hash of its code (the code itself is never stored, so a copy of the
database does not spend anyone's card), for store credit ``customer:<id>`` (one
credit balance per customer, whatever the race). Every change of a balance is a
``GiftCardMovement`` naming the entry that moved 21300 with it, so the card's
statement and the ledger tell the same story (GL 21300 = Σ balances).
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import CheckConstraint, Date, Index, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from tillbook.models.base import (
    Base,
    BigId,
    company_ref,
    created,
    money,
    opt_warehouse_ref,
    pk,
    refers,
)


class GiftCard(Base):
    __tablename__ = "gift_cards"
    __table_args__ = (
        UniqueConstraint("company_id", "lookup_key", name="uq_gift_cards_lookup"),
        # The guarded spend (``balance >= amount`` in its WHERE) keeps it so; the
        # database refuses anything else.
        CheckConstraint("balance >= 0", name="gift_card_balance_not_negative"),
    )

    id: Mapped[pk]
    company_id: Mapped[company_ref]
    kind: Mapped[str] = mapped_column(String(10))  # card | credit
    lookup_key: Mapped[str] = mapped_column(String(80))
    # The code's last four characters, all a list or a receipt shows after the sale.
    last4: Mapped[str | None] = mapped_column(String(4), nullable=True)
    customer_id: Mapped[int | None] = mapped_column(
        BigId, info=refers("users"), nullable=True, index=True
    )
    balance: Mapped[money]
    expires_on: Mapped[dt.date | None] = mapped_column(Date, nullable=True)
    status: Mapped[str] = mapped_column(String(10), default="active")  # active | expired
    warehouse_id: Mapped[opt_warehouse_ref]  # where it was issued
    created_by: Mapped[int | None] = mapped_column(BigId, nullable=True)
    created_at: Mapped[created]


class GiftCardMovement(Base):
    __tablename__ = "gift_card_movements"
    __table_args__ = (Index("ix_gift_card_movements_card", "card_id", "id"),)

    id: Mapped[pk]
    company_id: Mapped[company_ref]
    card_id: Mapped[int] = mapped_column(BigId, info=refers("gift_cards"))
    warehouse_id: Mapped[opt_warehouse_ref]
    # issue | load | spend | refund | void | expire
    kind: Mapped[str] = mapped_column(String(10))
    amount: Mapped[money]  # signed: what the balance moved by
    balance_after: Mapped[money]
    order_id: Mapped[int | None] = mapped_column(
        BigId, info=refers("orders"), nullable=True, index=True
    )
    journal_entry_id: Mapped[int | None] = mapped_column(BigId, nullable=True)
    created_by: Mapped[int | None] = mapped_column(BigId, nullable=True)
    created_at: Mapped[created]
