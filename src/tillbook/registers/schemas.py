"""Bodies of the register endpoints: pairing (back office) and the heartbeat."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StrictInt, StrictStr

from tillbook.fields import Ref, Strict
from tillbook.kit.bounds import Clean

Name = Annotated[StrictStr, Field(min_length=1, max_length=100), Clean]


class RegisterIn(Strict):
    warehouse_id: Ref
    name: Name


class PinIn(Strict):
    """4 to 8 digits; null removes the PIN."""

    pin: Annotated[StrictStr, Field(min_length=1, max_length=8)] | None


class Refused(Strict):
    """A write the server refused, as the register holds it in "needs attention"."""

    key: Annotated[StrictStr, Field(min_length=1, max_length=255), Clean]
    kind: Annotated[StrictStr, Field(min_length=1, max_length=30), Clean]
    number: Annotated[StrictStr, Field(max_length=100), Clean] | None = None
    reason: Annotated[StrictStr, Field(max_length=1000), Clean] = ""
    at: Annotated[StrictStr, Field(max_length=40), Clean] | None = None


class HeartbeatIn(Strict):
    queued: Annotated[StrictInt, Field(ge=0, le=1_000_000)] = 0
    attention: Annotated[list[Refused], Field(max_length=200)] = Field(default=[])
