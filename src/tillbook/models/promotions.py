"""Promotions (DESIGN §18): a company's price rules, priced by one engine
(``orders/promotions.py``) for the preview, the sale and the register alike.

A promotion's rule (its ``kind`` and ``rule`` parameters, what it ``applies_to``)
never changes once the promotion has started: a sale rung up offline yesterday is
priced by the rules in force then, so a started promotion is ended and another
made, not rewritten. What may change is its name, its end and its state; every
change of state (active, paused, archived) is appended to ``states`` with the
instant it took effect, so the state at any moment of the past is known.
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import Boolean, Date, Integer, String, Text, Time
from sqlalchemy.orm import Mapped, mapped_column

from tillbook.models.base import (
    Base,
    BigId,
    Editable,
    company_ref,
    created,
    opt_warehouse_ref,
    pk,
)


class Promotion(Editable, Base):
    __tablename__ = "promotions"

    id: Mapped[pk]
    company_id: Mapped[company_ref]
    # One branch, or every branch of the company (NULL).
    warehouse_id: Mapped[opt_warehouse_ref]
    name: Mapped[str] = mapped_column(String(120))
    # percent_off | amount_off | buy_x_get_y | quantity_break | bundle
    kind: Mapped[str] = mapped_column(String(20))
    # all | products | categories | brands, and the ids (a JSON list) it names.
    applies_to: Mapped[str] = mapped_column(String(12), default="all")
    targets: Mapped[str] = mapped_column(Text, default="[]")
    # The kind's parameters, a JSON object (``orders/promotions.py`` reads them).
    rule: Mapped[str] = mapped_column(Text, default="{}")
    starts_on: Mapped[dt.date] = mapped_column(Date)
    ends_on: Mapped[dt.date | None] = mapped_column(Date, nullable=True)
    # ISO weekdays it runs on (1 Monday … 7 Sunday), and the hours of the day
    # (the company's time zone), both ends given or neither.
    weekdays: Mapped[str] = mapped_column(String(7), default="1234567")
    from_time: Mapped[dt.time | None] = mapped_column(Time, nullable=True)
    until_time: Mapped[dt.time | None] = mapped_column(Time, nullable=True)
    # Higher first; a promotion that does not combine competes alone with the
    # combinable ones together, and the larger discount for the customer wins.
    priority: Mapped[int] = mapped_column(Integer, default=0)
    combines: Mapped[bool] = mapped_column(Boolean, default=True)
    status: Mapped[str] = mapped_column(String(10), default="active")  # active | paused | archived
    # [[ISO instant, status], ...], oldest first: appended, never rewritten.
    states: Mapped[str] = mapped_column(Text, default="[]")
    created_by: Mapped[int | None] = mapped_column(BigId, nullable=True)
    created_at: Mapped[created]


__all__ = ["Promotion"]
