"""What a client sends to set up a customer or supplier: the admin API's bodies, the
till's new customer, and one row of an import file. The same field types serve all
of them, so a name, a code or an email is refused with the same message whichever
door it came through. Lengths are the ``users`` columns' (``kit/bounds.py``)."""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import AfterValidator, Field, StrictInt, StrictStr

from tillbook.fields import Ref, Strict, UniqueId
from tillbook.kit.bounds import Money, clean_text, stored_length
from tillbook.models import User

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s.]+$")


def _trimmed(value: str) -> str:
    """Storable text without the spaces around it (a control character is refused
    before stripping: Python counts U+001C to U+001F as white space)."""
    return clean_text(value).strip()


def _required(value: str) -> str:
    value = _trimmed(value)
    if not value:
        raise ValueError("must not be empty")
    return value


def _optional(value: str) -> str | None:
    return _trimmed(value) or None


def _email(value: str) -> str | None:
    text = _optional(value)
    if text is not None and not _EMAIL.match(text):
        raise ValueError("must be an email address like name@example.com")
    return text


Name = Annotated[StrictStr, Field(max_length=stored_length(User.name)), AfterValidator(_required)]
Code = Annotated[
    StrictStr,
    Field(
        max_length=stored_length(User.code),
        description="the shop's own account number for the party; unique per company and kind",
    ),
    AfterValidator(_optional),
]
Phone = Annotated[StrictStr, Field(max_length=stored_length(User.phone)), AfterValidator(_optional)]
Email = Annotated[StrictStr, Field(max_length=stored_length(User.email)), AfterValidator(_email)]
TaxNumber = Annotated[
    StrictStr, Field(max_length=stored_length(User.tax_number)), AfterValidator(_optional)
]
Address = Annotated[
    StrictStr, Field(max_length=stored_length(User.address)), AfterValidator(_optional)
]


class PartyIn(Strict):
    """A new customer or supplier (admin API). ``opening_balance``: what a customer
    owes, or a supplier is owed, on the day the shop starts its books here; posted
    once, against Opening Balance Equity, in ``warehouse_id`` (default: the
    company's first warehouse)."""

    name: Name
    code: Code | None = None
    phone: Phone | None = None
    email: Email | None = None
    tax_number: TaxNumber | None = None
    address: Address | None = None
    credit_limit: Money | None = Field(
        default=None, description="customers only; what they may owe before credit sales stop"
    )
    opening_balance: Money | None = None
    warehouse_id: Ref | None = Field(
        default=None, description="where the opening balance is posted"
    )


class PartyPatch(Strict):
    """Fields to change; a field left out keeps its value, ``null`` clears it.
    ``version`` (or ``If-Match``) names the version the change is based on."""

    name: Name | None = None
    code: Code | None = None
    phone: Phone | None = None
    email: Email | None = None
    tax_number: TaxNumber | None = None
    address: Address | None = None
    credit_limit: Money | None = None
    version: StrictInt | None = Field(default=None, ge=1)
    # Named only to refuse them with a reason (an opening balance is posted once).
    opening_balance: Any = Field(
        default=None, description="not editable: an opening balance is posted once, at creation"
    )


class TillCustomerIn(Strict):
    """A customer added at the till (POST /customers): contact details only; credit
    limits and opening balances are the back office's."""

    name: Name
    code: Code | None = None
    phone: Phone | None = None
    email: Email | None = None
    tax_number: TaxNumber | None = None
    address: Address | None = None
    unique_id: UniqueId | None = None


class PartyRow(Strict):
    """One row of a customer or supplier import file."""

    code: Code
    name: Name
    phone: Phone | None = None
    email: Email | None = None
    tax_number: TaxNumber | None = None
    address: Address | None = None
    opening_balance: Money | None = None
    # Where a new party's opening balance is posted: a warehouse's name or id.
    warehouse: Name | None = None


EDITABLE = ("name", "code", "phone", "email", "tax_number", "address", "credit_limit")
