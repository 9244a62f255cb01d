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
