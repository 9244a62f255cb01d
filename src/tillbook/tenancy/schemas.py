"""Request bodies of the back office's warehouses (branches)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StrictBool, StrictStr

from tillbook.fields import Name, Strict, Version
from tillbook.kit.bounds import Clean, stored_length
from tillbook.models import Warehouse

Address = Annotated[StrictStr, Field(max_length=stored_length(Warehouse.address)), Clean]
Phone = Annotated[StrictStr, Field(max_length=stored_length(Warehouse.phone)), Clean]
# Printed on receipts: several lines are fine (CR, LF and tab are allowed text).
ReceiptText = Annotated[StrictStr, Field(max_length=stored_length(Warehouse.receipt_header)), Clean]


class WarehouseIn(Strict):
    name: Name
    address: Address | None = None
    phone: Phone | None = None
    allow_negative_stock: StrictBool = False
    require_shift: StrictBool = False
    receipt_header: ReceiptText | None = None
    receipt_footer: ReceiptText | None = None


class WarehousePatch(Strict):
    name: Name | None = None
    address: Address | None = None
    phone: Phone | None = None
    allow_negative_stock: StrictBool | None = None
    require_shift: StrictBool | None = None
    receipt_header: ReceiptText | None = None
    receipt_footer: ReceiptText | None = None
    version: Version | None = None
