"""What an authenticated request carries: the key's tenant, warehouse and acting user."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AuthContext:
    key_id: int
    company_id: int
    warehouse_id: int
    user_id: int
    user_name: str
    rate_limit: str
    allow_negative_stock: bool
    # The company's ``reference_version`` as the key lookup read it: the version of
    # the taxes and payment modes this request may take from a process cache. None:
    # not known (a terminal callback), so they are read from the database.
    reference_version: int | None = None
