"""Request bodies of the back-office API.

Every string is storable text (``kit/bounds.py``): a NUL in an email would reach
the database as a query parameter, one in a URL would be stored.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StrictStr

from tillbook.kit.bounds import Clean, stored_length
from tillbook.models import Webhook


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
