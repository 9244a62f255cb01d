"""Request bodies of the back office's period close and reopen."""

from __future__ import annotations

from tillbook.fields import Strict
from tillbook.kit.bounds import BusinessDay


class PeriodCloseIn(Strict):
    # The last day to close (up to today).
    through: BusinessDay


class PeriodReopenIn(Strict):
    # The books stay closed through this day; null reopens every period.
    through: BusinessDay | None = None
