"""Request bodies of the back-office API.

Every string is storable text (``kit/bounds.py``): a NUL in an email would reach
the database as a query parameter, one in a URL would be stored.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr

from tillbook.kit.bounds import Clean, stored_length
from tillbook.models import User, Webhook


class LoginIn(BaseModel):
    model_config = ConfigDict(extra="ignore")

    email: Annotated[StrictStr, Field(min_length=3, max_length=254), Clean]
    password: Annotated[StrictStr, Field(min_length=1, max_length=1024), Clean]


EventName = Annotated[StrictStr, Field(min_length=1, max_length=50), Clean]


class WebhookIn(BaseModel):
    model_config = ConfigDict(extra="ignore")

    url: Annotated[StrictStr, Field(min_length=1, max_length=stored_length(Webhook.url)), Clean]
    events: (
        Annotated[
            list[EventName],
            Field(max_length=50, description="event types; omitted, empty or ['*'] for all"),
        ]
        | None
    ) = None


StaffName = Annotated[StrictStr, Field(min_length=1, max_length=stored_length(User.name)), Clean]
StaffEmail = Annotated[StrictStr, Field(min_length=3, max_length=stored_length(User.email)), Clean]
Password = Annotated[StrictStr, Field(min_length=8, max_length=1024), Clean]
Role = Literal["owner", "manager", "accountant", "cashier"]
WarehouseRef = Annotated[StrictInt, Field(ge=1, le=2**63 - 1)]


class StaffIn(BaseModel):
    model_config = ConfigDict(extra="ignore")

    name: StaffName
    email: StaffEmail
    role: Role
    password: Password
    warehouse_id: WarehouseRef | None = Field(
        default=None, description="limit the staff member to one warehouse (not for owners)"
    )


class StaffPatch(BaseModel):
    """Only the fields sent change; ``warehouse_id: null`` removes the scope."""

    model_config = ConfigDict(extra="ignore")

    name: StaffName | None = None
    email: StaffEmail | None = None
    role: Role | None = None
    password: Password | None = None
    warehouse_id: WarehouseRef | None = None
    version: Annotated[StrictInt, Field(ge=1, le=2**31 - 1)] | None = Field(
        default=None, description="the version this edit is based on (or send If-Match)"
    )
