"""Field types of request bodies that every domain's schemas share: references,
tokens, invoice numbers, payment references and the body base class. Their limits
come from ``kit/bounds.py`` (derived from the columns that store them), so a sale,
a payment and an adjustment refuse the same value with the same message."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictInt, StrictStr

from tillbook.kit.bounds import Clean, ExchangeRate, PositiveMoney, stored_length
from tillbook.kit.versions import MAX_VERSION
from tillbook.models import Order, Payment

__all__ = [
    "GiftCardCode",
    "ImageUrl",
    "InCurrency",
    "InvoiceNo",
    "Name",
    "Name100",
    "PositiveMoney",
    "Ref",
    "Reference",
    "ShortName",
    "Slug",
    "Strict",
    "UniqueId",
    "Version",
]

Ref = Annotated[
    StrictInt | Annotated[StrictStr, Field(min_length=1, max_length=64), Clean],
    Field(description="numeric id, numeric string or xid"),
]
# Kept as the order's ``unique_id`` (and as the idempotency token).
UniqueId = Annotated[
    StrictStr, Field(min_length=1, max_length=stored_length(Order.unique_id)), Clean
]
InvoiceNo = Annotated[
    StrictStr,
    Field(
        min_length=1,
        max_length=stored_length(Order.invoice_number),
        pattern=r"^[\x21-\x7e ]+$",
    ),
    Clean,
]
Reference = Annotated[StrictStr, Field(max_length=stored_length(Payment.reference)), Clean]
# As printed (groups of four with dashes) or typed (spaces, lower case): 16
# base32 characters once those are dropped; a wrong shape is refused like an
# unknown code (``giftcards.codes``), so only the length is limited here.
GiftCardCode = Annotated[StrictStr, Field(min_length=1, max_length=40), Clean]


class Strict(BaseModel):
    model_config = ConfigDict(extra="ignore", arbitrary_types_allowed=True)


# --- set-up records the back office edits ---------------------------------------------


def _not_blank(value: str) -> str:
    """A name is kept without its outer spaces, and is not only spaces."""
    stripped = value.strip()
    if not stripped:
        raise ValueError("must not be empty or only spaces")
    return stripped


# Display names: storable text as long as stored (200 or 100 characters; a unit's
# short name 20), outer spaces dropped.
Name = Annotated[StrictStr, Field(min_length=1, max_length=200), Clean, AfterValidator(_not_blank)]
Name100 = Annotated[
    StrictStr, Field(min_length=1, max_length=100), Clean, AfterValidator(_not_blank)
]
ShortName = Annotated[
    StrictStr, Field(min_length=1, max_length=20), Clean, AfterValidator(_not_blank)
]
# URL-safe: lower-case letters and digits in words joined by single hyphens.
Slug = Annotated[
    StrictStr, Field(min_length=1, max_length=200, pattern=r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
]
# An image is a link: http(s) or a path on this server, no spaces.
ImageUrl = Annotated[
    StrictStr, Field(min_length=1, max_length=500, pattern=r"^(https?://|/)[\x21-\x7e]*$")
]
# The ``version`` an edit is based on, when sent in the body instead of If-Match.
Version = Annotated[StrictInt, Field(ge=1, le=MAX_VERSION)]


class InCurrency(Strict):
    """The currency fields of a document (DESIGN §16), additive to the spec: left out,
    the document is in the company's base currency, as every v1 client sends it."""

    currency: Annotated[StrictStr, Field(min_length=1, max_length=8), Clean] | None = Field(
        default=None,
        description="ISO 4217 code of the document's amounts; default the company's base "
        "currency; another must be enabled for the company (additive: DESIGN §16)",
    )
    exchange_rate: ExchangeRate | None = Field(
        default=None,
        description="base units per one unit of `currency`; default the company's rate "
        "in force on the document's date (additive)",
    )
