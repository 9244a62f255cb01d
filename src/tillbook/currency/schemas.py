"""Request bodies of the company's currencies and rates (admin API).

The code and the rate are checked by the service (``currency/rates.py``), not here:
the back office's forms and the command line send the same values as text, and all
three doors must refuse them with the same message naming the same field. Only the
shape is checked here: text the books can store, a number written in ASCII digits,
a real date."""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated

from pydantic import Field, StrictStr

from tillbook.fields import Strict
from tillbook.kit.bounds import AsciiNumber, Clean, StorableDay

# An ISO 4217 code as typed (`eur`, ` EUR`): normalised and checked by the service.
CurrencyCode = Annotated[StrictStr, Field(min_length=1, max_length=20), Clean]
# Base units per one foreign unit; its range and places are ``FX_RATE``'s, checked by
# ``rates.check_rate`` so that every door names ``rate`` with one message.
RateValue = Annotated[Decimal, AsciiNumber, Field(allow_inf_nan=False)]


class CurrencyIn(Strict):
    currency: CurrencyCode


class ExchangeRateIn(Strict):
    currency: CurrencyCode
    date: StorableDay
    rate: RateValue
