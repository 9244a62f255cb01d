"""Request bodies of the back-office API."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StrictStr


class LoginIn(BaseModel):
    model_config = ConfigDict(extra="ignore")

    email: Annotated[StrictStr, Field(min_length=3, max_length=254)]
    password: Annotated[StrictStr, Field(min_length=1, max_length=1024)]


EventName = Annotated[StrictStr, Field(min_length=1, max_length=50)]


class WebhookIn(BaseModel):
    model_config = ConfigDict(extra="ignore")

    url: Annotated[StrictStr, Field(min_length=1, max_length=2000)]
    events: (
        Annotated[
            list[EventName],
            Field(max_length=50, description="event types; omitted, empty or ['*'] for all"),
        ]
        | None
    ) = None
