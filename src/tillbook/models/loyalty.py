"""Loyalty points (DESIGN §18): a programme per company, points per customer.

``LoyaltyProgramme`` is the company's one programme: a point is earned per
``earn_unit`` of the base currency a sale comes to (less what points paid for it),
and each point is worth ``point_value``, which is what 21400 Loyalty Points owes
for it. ``LoyaltyAccount`` holds one customer's whole points; every change of it is
an insert-only ``LoyaltyMovement`` naming the order and the journal entry that
moved 21400 with it, and carrying that value. So, per account, Σ movement points
is the balance and Σ movement values is balance × the current point value (a
revaluation writes a movement of no points and the value's change), and GL 21400
is the sum over every account.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    Index,
    Integer,
    String,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from tillbook.models.base import (
    Base,
    BigId,
    Money,
    company_ref,
    created,
    money,
    opt_warehouse_ref,
    pk,
    refers,
)


class LoyaltyProgramme(Base):
    __tablename__ = "loyalty_programmes"
    __table_args__ = (
        UniqueConstraint("company_id", name="uq_loyalty_programmes_company"),
        CheckConstraint("earn_unit > 0", name="loyalty_earn_unit_positive"),
        CheckConstraint("point_value > 0", name="loyalty_point_value_positive"),
    )

    id: Mapped[pk]
    company_id: Mapped[company_ref]
    # The base-currency amount that earns one point (1.00: a point per 1.00 paid).
    earn_unit: Mapped[Decimal] = mapped_column(Money)
    # What one point is worth when redeemed, and what 21400 owes for it.
    point_value: Mapped[Decimal] = mapped_column(Money)
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    version: Mapped[int] = mapped_column(Integer, default=1)
    updated_by: Mapped[int | None] = mapped_column(BigId, nullable=True)
    updated_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    created_at: Mapped[created]


class LoyaltyAccount(Base):
    __tablename__ = "loyalty_accounts"
    # No check on ``points >= 0``: a return takes back the points its sale earned
    # even when the customer has spent them since, and the balance goes below zero
    # (the redeeming update guards ``points >= wanted`` itself).
    __table_args__ = (UniqueConstraint("company_id", "customer_id", name="uq_loyalty_accounts"),)

    id: Mapped[pk]
    company_id: Mapped[company_ref]
    customer_id: Mapped[int] = mapped_column(BigId, info=refers("users"), index=True)
    points: Mapped[int] = mapped_column(BigInteger, default=0)
    created_at: Mapped[created]


class LoyaltyMovement(Base):
    __tablename__ = "loyalty_movements"
    __table_args__ = (Index("ix_loyalty_movements_account", "account_id", "id"),)

    id: Mapped[pk]
    company_id: Mapped[company_ref]
    account_id: Mapped[int] = mapped_column(BigId, info=refers("loyalty_accounts"))
    warehouse_id: Mapped[opt_warehouse_ref]
    # earn | redeem | return | refund | void | revalue
    kind: Mapped[str] = mapped_column(String(10))
    points: Mapped[int] = mapped_column(BigInteger)  # signed: what the balance moved by
    points_after: Mapped[int] = mapped_column(BigInteger)
    # signed: what 21400 owes more (a credit to it) for this movement
    value: Mapped[money]
    order_id: Mapped[int | None] = mapped_column(
        BigId, info=refers("orders"), nullable=True, index=True
    )
    journal_entry_id: Mapped[int | None] = mapped_column(BigId, nullable=True)
    created_by: Mapped[int | None] = mapped_column(BigId, nullable=True)
    created_at: Mapped[created]
