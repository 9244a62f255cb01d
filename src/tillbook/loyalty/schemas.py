"""The programme's request body (admin API and the Settings → Loyalty form)."""

from __future__ import annotations

from pydantic import Field, StrictBool

from tillbook.fields import PositiveMoney, Strict, Version


class ProgrammeIn(Strict):
    earn_unit: PositiveMoney = Field(
        description="the base-currency amount a sale must come to for one point "
        "(1.00: a point per 1.00 paid; 10.00: a point per 10.00)"
    )
    point_value: PositiveMoney = Field(
        description="what one point is worth when redeemed, in the base currency; "
        "changing it revalues every outstanding point (an entry between 21400 and 41300)"
    )
    active: StrictBool = Field(
        default=True,
        description="whether sales earn points; points already earned may be redeemed either way",
    )
    version: Version | None = Field(
        default=None,
        description="the version of the programme this change is based on (or If-Match); "
        "not needed to set up the first programme",
    )
