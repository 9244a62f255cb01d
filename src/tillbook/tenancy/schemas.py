"""Request bodies of the back office's warehouses (branches)."""

from __future__ import annotations

from typing import Annotated
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import AfterValidator, Field, StrictBool, StrictStr

from tillbook.fields import Name, Strict, Version
from tillbook.kit.bounds import Clean, stored_length
from tillbook.models import Warehouse
from tillbook.models.tenancy import MONEY_FORMATS

Address = Annotated[StrictStr, Field(max_length=stored_length(Warehouse.address)), Clean]
Phone = Annotated[StrictStr, Field(max_length=stored_length(Warehouse.phone)), Clean]
# Printed on receipts: several lines are fine (CR, LF and tab are allowed text).
ReceiptText = Annotated[StrictStr, Field(max_length=stored_length(Warehouse.receipt_header)), Clean]


def _known_zone(value: str) -> str:
    """An IANA zone this machine's tz database knows (``Europe/Paris``, ``UTC``);
    a file path or an unknown name is refused here, not when a page is drawn."""
    if not value or value.startswith(("/", ".")) or "\\" in value or ".." in value:
        raise ValueError("must be an IANA time zone such as Europe/Paris or UTC")
    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise ValueError(
            f"unknown time zone {value!r}: use an IANA name such as Europe/Paris or UTC"
        ) from None
    return value


TimeZone = Annotated[
    StrictStr,
    Field(max_length=stored_length(Warehouse.timezone)),
    Clean,
    AfterValidator(_known_zone),
]


def _known_format(value: str) -> str:
    if value not in MONEY_FORMATS:
        raise ValueError("must be one of " + ", ".join(MONEY_FORMATS))
    return value


MoneyFormat = Annotated[StrictStr, AfterValidator(_known_format)]


class CompanySettingsIn(Strict):
    money_format: MoneyFormat


class WarehouseIn(Strict):
    name: Name
    address: Address | None = None
    phone: Phone | None = None
    allow_negative_stock: StrictBool = False
    require_shift: StrictBool = False
    receipt_header: ReceiptText | None = None
    receipt_footer: ReceiptText | None = None
    timezone: TimeZone = "UTC"


class WarehousePatch(Strict):
    name: Name | None = None
    address: Address | None = None
    phone: Phone | None = None
    allow_negative_stock: StrictBool | None = None
    require_shift: StrictBool | None = None
    receipt_header: ReceiptText | None = None
    receipt_footer: ReceiptText | None = None
    timezone: TimeZone | None = None
    version: Version | None = None
