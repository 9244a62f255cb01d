"""Payment modes, payments and their invoice allocations, expenses, price history."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from sqlalchemy import Date, Index, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from tillbook.models.base import (
    Base,
    BigId,
    Editable,
    FxRate,
    Money,
    Price,
    company_ref,
    created,
    money,
    opt_warehouse_ref,
    pk,
    refers,
    warehouse_ref,
)


class PaymentMode(Editable, Base):
    __tablename__ = "payment_modes"
    __table_args__ = (UniqueConstraint("company_id", "code", name="uq_payment_modes_code"),)

    id: Mapped[pk]
    company_id: Mapped[company_ref]
    code: Mapped[str] = mapped_column(String(50))
    name: Mapped[str] = mapped_column(String(100))
    account_id: Mapped[int] = mapped_column(BigId, info=refers("accounts"))
    # A drawer or account of foreign money (DESIGN §16: foreign cash at the till):
    # its account holds that currency only; NULL: the base currency.
    currency: Mapped[str | None] = mapped_column(String(3), nullable=True)


class Payment(Base):
    __tablename__ = "payments"
    __table_args__ = (Index("ix_payments_wh_id", "warehouse_id", "id"),)

    id: Mapped[pk]
    company_id: Mapped[company_ref]
    warehouse_id: Mapped[warehouse_ref]
    user_id: Mapped[int] = mapped_column(BigId, info=refers("users"), index=True)
    payment_type: Mapped[str] = mapped_column(String(5))  # in | out
    amount: Mapped[money]
    unallocated_amount: Mapped[money]
    payment_mode_id: Mapped[int] = mapped_column(BigId, info=refers("payment_modes"))
    date: Mapped[dt.date] = mapped_column(Date)
    reference: Mapped[str | None] = mapped_column(String(200), nullable=True)
    notes: Mapped[str] = mapped_column(Text, default="")
    order_id: Mapped[int | None] = mapped_column(BigId, info=refers("orders"), nullable=True)
    journal_entry_id: Mapped[int | None] = mapped_column(BigId, nullable=True)
    created_by: Mapped[int | None] = mapped_column(BigId, nullable=True)
    # The till shift that took or gave the money (None: no shift was open).
    shift_id: Mapped[int | None] = mapped_column(BigId, nullable=True, index=True)
    # A payment in a foreign currency (DESIGN §16): ``amount`` is in it, converted
    # at ``exchange_rate``. NULL: the base currency.
    currency: Mapped[str | None] = mapped_column(String(3), nullable=True)
    exchange_rate: Mapped[Decimal | None] = mapped_column(FxRate, nullable=True)
    # A tender of foreign cash on a base-currency sale: ``amount`` is the base
    # applied, ``amount_foreign`` the cash taken in the mode's currency, and
    # ``change_given`` the change handed back in the base from the drawer's cash.
    amount_foreign: Mapped[Decimal | None] = mapped_column(Money, nullable=True)
    change_given: Mapped[Decimal | None] = mapped_column(Money, nullable=True)
    created_at: Mapped[created]


class PaymentAllocation(Base):
    """The order-payment entry: how much of a payment settles one invoice."""

    __tablename__ = "payment_allocations"

    id: Mapped[pk]
    company_id: Mapped[company_ref]
    payment_id: Mapped[int] = mapped_column(BigId, info=refers("payments"), index=True)
    order_id: Mapped[int] = mapped_column(BigId, info=refers("orders"), index=True)
    amount: Mapped[money]
    created_at: Mapped[created]


class ExpenseCategory(Editable, Base):
    __tablename__ = "expense_categories"

    id: Mapped[pk]
    company_id: Mapped[company_ref]
    name: Mapped[str] = mapped_column(String(100))
    account_id: Mapped[int] = mapped_column(BigId, info=refers("accounts"))


class Expense(Base):
    __tablename__ = "expenses"

    id: Mapped[pk]
    company_id: Mapped[company_ref]
    warehouse_id: Mapped[opt_warehouse_ref]
    expense_category_id: Mapped[int] = mapped_column(BigId, info=refers("expense_categories"))
    amount: Mapped[money]
    date: Mapped[dt.date] = mapped_column(Date)
    payment_mode_id: Mapped[int | None] = mapped_column(
        BigId, info=refers("payment_modes"), nullable=True
    )
    user_id: Mapped[int | None] = mapped_column(BigId, info=refers("users"), nullable=True)
    status: Mapped[str] = mapped_column(String(10))  # paid | pending
    reference: Mapped[str | None] = mapped_column(String(200), nullable=True)
    notes: Mapped[str] = mapped_column(Text, default="")
    journal_entry_id: Mapped[int | None] = mapped_column(BigId, nullable=True)
    created_by: Mapped[int | None] = mapped_column(BigId, nullable=True)
    created_at: Mapped[created]
    # A pending expense approved and paid later (``payments.expenses.pay_expense``):
    # the entry that paid it (Dr 21100 / Cr the mode's account), its date and who
    # approved it. NULL for an expense paid when it was recorded, and while pending.
    payment_entry_id: Mapped[int | None] = mapped_column(BigId, nullable=True)
    paid_on: Mapped[dt.date | None] = mapped_column(Date, nullable=True)
    paid_by: Mapped[int | None] = mapped_column(BigId, nullable=True)
    # An expense in a foreign currency: ``amount`` is in it; ``base_amount`` is what
    # the expense account was debited (and, while pending, 21100 credited) in the
    # base. NULL: the base currency.
    currency: Mapped[str | None] = mapped_column(String(3), nullable=True)
    exchange_rate: Mapped[Decimal | None] = mapped_column(FxRate, nullable=True)
    base_amount: Mapped[Decimal | None] = mapped_column(Money, nullable=True)


class PriceAdjustmentBatch(Base):
    __tablename__ = "price_adjustment_batches"
    __table_args__ = (Index("ix_price_batches_wh_id", "warehouse_id", "id"),)

    id: Mapped[pk]
    company_id: Mapped[company_ref]
    warehouse_id: Mapped[warehouse_ref]
    invoice_number: Mapped[str] = mapped_column(String(50))
    date: Mapped[dt.date] = mapped_column(Date)
    notes: Mapped[str] = mapped_column(Text, default="")
    created_by: Mapped[int | None] = mapped_column(BigId, nullable=True)
    created_at: Mapped[created]


class PriceHistory(Base):
    """Immutable: inserted once per price change, never updated or deleted."""

    __tablename__ = "price_history"

    id: Mapped[pk]
    company_id: Mapped[company_ref]
    warehouse_id: Mapped[warehouse_ref]
    batch_id: Mapped[int] = mapped_column(BigId, info=refers("price_adjustment_batches"))
    product_id: Mapped[int] = mapped_column(BigId, info=refers("products"), index=True)
    old_price: Mapped[Decimal] = mapped_column(Price)
    new_price: Mapped[Decimal] = mapped_column(Price)
    created_by: Mapped[int | None] = mapped_column(BigId, nullable=True)
    created_at: Mapped[created]


__all__ = [
    "Expense",
    "ExpenseCategory",
    "Payment",
    "PaymentAllocation",
    "PaymentMode",
    "PriceAdjustmentBatch",
    "PriceHistory",
]
