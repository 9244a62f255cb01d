"""Tenants (companies), their branches (warehouses) and the people they deal with."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from sqlalchemy import Boolean, Date, Index, Integer, String, false
from sqlalchemy.orm import Mapped, mapped_column

from tillbook.models.base import (
    Base,
    BigId,
    Editable,
    Money,
    company_ref,
    created,
    money,
    pk,
    refers,
)

# The company's choices of how money is written: pattern -> (grouping mark, decimal mark).
MONEY_FORMATS: dict[str, tuple[str, str]] = {
    "1,234.56": (",", "."),
    "1.234,56": (".", ","),
    "1 234,56": ("\u00a0", ","),
}


class Company(Base):
    __tablename__ = "companies"

    id: Mapped[pk]
    name: Mapped[str] = mapped_column(String(200))
    base_currency: Mapped[str] = mapped_column(String(3), default="USD")
    # None: no expiry. A date: the last day the subscription is valid.
    subscription_expires_on: Mapped[dt.date | None] = mapped_column(Date, nullable=True)
    created_at: Mapped[created]
    # Grows by one with every change to the company's reference data (taxes, payment
    # modes, units, categories, brands, expense categories, warehouses), in the
    # change's transaction. The key lookup reads it on every request, so a process
    # caching taxes and modes (``orders/lookup.py``) knows for free when its copy is
    # stale; reference writes update this row first, which also serialises them per
    # company (name checks then cannot race).
    reference_version: Mapped[int] = mapped_column(
        Integer, nullable=False, default=0, server_default="0"
    )
    # How the back office writes amounts: one of ``MONEY_FORMATS`` (grouping and
    # decimal marks). Files (CSV) keep plain decimals whatever it says.
    money_format: Mapped[str] = mapped_column(
        String(16), nullable=False, default="1,234.56", server_default="1,234.56"
    )


class Warehouse(Editable, Base):
    __tablename__ = "warehouses"

    id: Mapped[pk]
    company_id: Mapped[company_ref]
    name: Mapped[str] = mapped_column(String(200))
    allow_negative_stock: Mapped[bool] = mapped_column(Boolean, default=False)
    address: Mapped[str | None] = mapped_column(String(500), nullable=True)
    phone: Mapped[str | None] = mapped_column(String(50), nullable=True)
    # Printed at the top and bottom of this branch's receipts.
    receipt_header: Mapped[str | None] = mapped_column(String(500), nullable=True)
    receipt_footer: Mapped[str | None] = mapped_column(String(500), nullable=True)
    # Sales here need an open till shift (``orders/shifts.py``).
    require_shift: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # The IANA zone the branch's clock reads (``Europe/Paris``): the back office shows
    # the times of what happened here in it. Business dates (``order_date``) are not
    # converted: they are the day the branch says they are.
    timezone: Mapped[str] = mapped_column(
        String(64), nullable=False, default="UTC", server_default="UTC"
    )
    created_at: Mapped[created]


class User(Editable, Base):
    """Anyone the books name: customers, suppliers and staff (the people who log
    in to the back office, with a ``role``, and the users API keys act as).

    ``balance`` is the party's running sub-ledger balance: what a customer owes
    (11500) or what the company owes a supplier (21100), kept in the same
    transaction as the journal line that moves it.
    """

    __tablename__ = "users"
    __table_args__ = (
        Index("ix_users_company_type_name", "company_id", "user_type", "name"),
        # A customer's or supplier's own code (their account number in the shop's
        # old system), unique per company and kind; import files match on it.
        Index("uq_users_company_type_code", "company_id", "user_type", "code", unique=True),
    )

    id: Mapped[pk]
    company_id: Mapped[company_ref]
    user_type: Mapped[str] = mapped_column(String(20))  # customer | supplier | staff
    name: Mapped[str] = mapped_column(String(200))
    email: Mapped[str | None] = mapped_column(String(200), nullable=True)
    phone: Mapped[str | None] = mapped_column(String(50), nullable=True)
    is_walk_in: Mapped[bool] = mapped_column(Boolean, default=False)
    password_hash: Mapped[str | None] = mapped_column(String(200), nullable=True)
    balance: Mapped[money]
    code: Mapped[str | None] = mapped_column(String(50), nullable=True)
    tax_number: Mapped[str | None] = mapped_column(String(50), nullable=True)
    address: Mapped[str | None] = mapped_column(String(500), nullable=True)
    # What a customer may owe before a credit sale is refused; None: no limit.
    credit_limit: Mapped[Decimal | None] = mapped_column(Money, nullable=True)
    # Staff only: owner | manager | accountant | cashier (``auth/roles.py``). NULL for
    # the user an API key made without ``--user`` acts as: it has no back office.
    role: Mapped[str | None] = mapped_column(String(20), nullable=True)
    # Staff only: the one warehouse a scoped staff member works in; NULL: all of them.
    warehouse_id: Mapped[int | None] = mapped_column(
        BigId, info=refers("warehouses"), nullable=True
    )
    # Staff only: the PIN they sell with at a register, as
    # ``pbkdf2-sha256$<iterations>$<salt b64>$<hash b64>`` (``kit/crypto.py``): the
    # register checks it offline, so its parameters are handed to the branch's
    # registers; NULL: no PIN, not a cashier at a register.
    pin_hash: Mapped[str | None] = mapped_column(String(200), nullable=True)
    created_at: Mapped[created]


class StaffLogin(Base):
    """One email, one login: a staff email belongs to one staff member of one
    company, compared lower-cased (``email`` is ``lower()`` of the staff member's,
    computed by the database), because back-office login finds the company and the
    person by the email alone. Customers and suppliers may share addresses freely.

    The rule holds across every tenant, so it has a table of its own, keyed by the
    email alone: a coordinator table (DESIGN §17, ``models/base.py``), kept by the
    staff service in the transaction that sets the staff member's email
    (``tenancy.staff``). No foreign key: a coordinator table cannot point at a
    distributed one."""

    __tablename__ = "staff_logins"

    email: Mapped[str] = mapped_column(String(200), primary_key=True)
    company_id: Mapped[int] = mapped_column(BigId)
    user_id: Mapped[int] = mapped_column(BigId)


__all__ = ["MONEY_FORMATS", "Company", "StaffLogin", "User", "Warehouse"]
