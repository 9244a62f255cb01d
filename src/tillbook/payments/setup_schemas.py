"""Request bodies of the back office's payment modes and expense categories.

Each maps to one account: an existing one named by ``account_code``, or a new one
made for it with ``create_account: true`` (not both). A mode's ``code`` is what
tills send as ``payment_mode_id`` (``cash``, ``card``): lower-case letters, digits,
``_`` and ``-``, starting with a letter.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StrictBool, StrictStr

from tillbook.fields import Name100, Strict, Version
from tillbook.kit.bounds import Clean

ModeCode = Annotated[StrictStr, Field(min_length=1, max_length=50, pattern=r"^[a-z][a-z0-9_-]*$")]
AccountCode = Annotated[StrictStr, Field(min_length=1, max_length=10, pattern=r"^[0-9]+$")]


class PaymentModeIn(Strict):
    code: ModeCode
    name: Name100
    account_code: AccountCode | None = None
    create_account: StrictBool = False
    currency: Annotated[StrictStr, Field(min_length=1, max_length=8), Clean] | None = Field(
        default=None,
        description="a foreign currency the mode's drawer or account holds (enabled for "
        "the company; with create_account); default the base currency",
    )


class PaymentModePatch(Strict):
    """The code cannot change: tills and integrations send it."""

    name: Name100 | None = None
    account_code: AccountCode | None = None
    create_account: StrictBool = False
    version: Version | None = None


class ExpenseCategoryIn(Strict):
    name: Name100
    account_code: AccountCode | None = None
    create_account: StrictBool = False


class ExpenseCategoryPatch(Strict):
    name: Name100 | None = None
    account_code: AccountCode | None = None
    create_account: StrictBool = False
    version: Version | None = None
