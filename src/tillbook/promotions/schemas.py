"""Request bodies of promotions. A create names the rule whole; an edit (PATCH) may
change only what does not reprice the past: the name and the last day (never before
today), and, before the promotion starts, nothing else either: a different rule is a
new promotion (``models/promotions.py``)."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

from pydantic import Field, StrictBool, StrictInt, StrictStr

from tillbook.fields import Name100, Ref, Strict, Version
from tillbook.kit.bounds import Money, Percent, Quantity

# A time of day on the branch's clock, to the minute.
Clock = Annotated[StrictStr, Field(pattern=r"^([01][0-9]|2[0-3]):[0-5][0-9]$")]
Kind = Literal["percent_off", "amount_off", "buy_x_get_y", "quantity_break", "bundle"]
Target = Literal["all", "products", "categories", "brands"]


class Tier(Strict):
    min_quantity: Quantity
    percent: Percent


class BundleItem(Strict):
    product_id: Ref
    quantity: Quantity


class PromotionIn(Strict):
    name: Name100
    kind: Kind = Field(
        description="percent_off, amount_off (per unit), buy_x_get_y, quantity_break "
        "or bundle (DESIGN §18)"
    )
    warehouse_id: Ref | None = Field(
        default=None, description="the one branch it runs in; default: every branch"
    )
    applies_to: Target = Field(
        default="all",
        description="all, products, categories or brands: what its lines are "
        "(bundles name their products in items)",
    )
    targets: Annotated[list[Ref], Field(max_length=500)] = Field(
        default=[], description="the product, category or brand ids applies_to names"
    )
    percent: Percent | None = Field(
        default=None,
        description="percent_off: the share off; buy_x_get_y: the share off the units "
        "given (default 100: free)",
    )
    amount: Money | None = Field(default=None, description="amount_off: off each unit")
    buy: Annotated[StrictInt, Field(ge=1, le=1000)] | None = None
    get: Annotated[StrictInt, Field(ge=1, le=1000)] | None = None
    tiers: Annotated[list[Tier], Field(max_length=20)] | None = None
    items: Annotated[list[BundleItem], Field(max_length=50)] | None = None
    price: Money | None = Field(default=None, description="bundle: the price of one set")
    starts_on: dt.date
    ends_on: dt.date | None = Field(default=None, description="its last day; default: none")
    weekdays: Annotated[list[Annotated[StrictInt, Field(ge=1, le=7)]], Field(max_length=7)] = Field(
        default=[1, 2, 3, 4, 5, 6, 7], description="ISO weekdays, 1 Monday … 7 Sunday"
    )
    from_time: Clock | None = None
    until_time: Clock | None = None
    priority: Annotated[StrictInt, Field(ge=0, le=1000)] = 0
    combines: StrictBool = Field(
        default=True,
        description="whether it applies beside other promotions; if not, it competes "
        "alone and the larger discount for the customer wins",
    )


class PromotionPatch(Strict):
    name: Name100 | None = None
    ends_on: dt.date | None = None
    version: Version | None = None


class StateIn(Strict):
    version: Version | None = None
