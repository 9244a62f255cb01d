"""The pieces every answer's shape is built from: the wire forms of money, prices,
quantities and dates, and the small references many answers share.

An answer's shape is declared once, as a ``TypedDict`` beside the code that builds
it (``orders/views.py``, ``catalog/...``). The service returns a plain dict that
mypy checks against it: nothing is built or validated per request. The OpenAPI
document is generated from the same types (pydantic's JSON Schema of a
``TypedDict``), so the document cannot drift from what the code answers.

Every shape forbids properties it does not name (``@answer``): the schemathesis run
(``tests/robustness``/``test_openapi_fuzz.py``) then fails on a field a view sends
that its type does not declare, instead of the field going undocumented.

The money forms (spec, DESIGN.md §3): money in orders is a decimal string with two
places; product prices, stock and quantities of order lines are JSON numbers
(``float`` here; ``kit/money.number`` may give an ``int``, which is one too).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from pydantic import ConfigDict, Field, WithJsonSchema, with_config
from typing_extensions import TypedDict

__all__ = [
    "DateStr",
    "DateTimeStr",
    "MoneyStr",
    "Named",
    "PriceStr",
    "ProductRef",
    "QuantityStr",
    "answer",
]

T = TypeVar("T", bound=type)

MoneyStr = Annotated[
    str, Field(pattern=r"^-?[0-9]+\.[0-9]{2}$", description="decimal string, 2 places")
]
PriceStr = Annotated[
    str,
    Field(pattern=r"^-?[0-9]+\.[0-9]{2}([0-9]{2})?$", description="decimal string, 2 or 4 places"),
]
QuantityStr = Annotated[
    str, Field(pattern=r"^-?[0-9]+\.[0-9]{4}$", description="decimal string, 4 places")
]
# Dates and instants go out as ISO strings (``date.isoformat()``); the document
# says which.
DateStr = Annotated[str, WithJsonSchema({"format": "date", "type": "string"})]
DateTimeStr = Annotated[str, WithJsonSchema({"format": "date-time", "type": "string"})]

_FORBID: Callable[[Any], Any] = with_config(ConfigDict(extra="forbid"))


def answer(shape: T) -> T:
    """Mark ``shape`` (a ``TypedDict``) as an answer: the document forbids what it
    does not name. Costs nothing per request: only the document reads it."""
    result: T = _FORBID(shape)
    return result


@answer
class Named(TypedDict):
    id: int
    name: str


@answer
class ProductRef(TypedDict):
    id: int
    xid: str
    name: str
    item_code: str
