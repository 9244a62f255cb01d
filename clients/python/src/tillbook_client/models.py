"""Typed resources and events.

Money is ``Decimal`` (the service sends decimal strings for orders and payments,
JSON numbers for prices and stock: both arrive here exact). Models accept fields
they do not name (``extra="allow"``), so a till keeps working when the service
adds a field."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict

T = TypeVar("T")

PaymentStatus = Literal["unpaid", "partially_paid", "paid"]


class Model(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)


class Page(Model, Generic[T]):
    current_page: int
    per_page: int
    total: int
    last_page: int
    data: list[T]


class Named(Model):
    id: int
    name: str


class XidNamed(Model):
    xid: str
    name: str


class ProductRef(Model):
    id: int
    xid: str
    name: str
    item_code: str


class Warehouse(Model):
    id: int
    xid: str
    name: str
    allow_negative_stock: bool


class UnitRef(Model):
    xid: str
    name: str
    short_name: str


class Product(Model):
    id: int
    xid: str
    name: str
    slug: str
    item_code: str
    product_type: str
    sales_price: Decimal
    purchase_price: Decimal
    mrp: Decimal | None
    current_stock: Decimal
    category: XidNamed | None
    brand: XidNamed | None
    unit: UnitRef | None
    barcode: str | None = None
    reorder_level: Decimal = Decimal(0)
    active: bool = True
    has_additional_units: bool = False


class AdditionalUnit(Model):
    child_unit_id: str
    operator: str
    operator_value: Decimal
    alternative_price: Decimal


class Batch(Model):
    id: int
    batch_number: str | None
    expiry_date: dt.date | None
    quantity_remaining: Decimal
    unit_cost: Decimal
    received_at: dt.datetime


class ProductDetail(Product):
    description: str = ""
    barcodes: list[str] = []
    additional_units: list[AdditionalUnit] = []
    batches: list[Batch] = []


class Category(Model):
    id: int
    xid: str
    name: str
    slug: str
    parent_id: int | None
    image: str | None
    children: list[Category] = []


class Brand(Model):
    id: int
    xid: str
    name: str
    slug: str
    image: str | None


class Customer(Model):
    id: int
    xid: str
    name: str
    phone: str | None
    email: str | None
    is_walk_in: bool = False
    balance: Decimal


class Supplier(Model):
    id: int
    xid: str
    name: str
    phone: str | None
    email: str | None
    balance: Decimal


class PaymentMode(Model):
    id: int
    xid: str
    code: str
    name: str
    account_code: str


class Tax(Model):
    id: int
    xid: str
    name: str
    rate: Decimal
    inclusive: bool


class Unit(Model):
    id: int
    xid: str
    name: str
    short_name: str


class ExpenseCategory(Model):
    id: int
    xid: str
    name: str
    account_code: str


class OrderLine(Model):
    id: int
    product_id: int
    quantity: Decimal
    unit_price: Decimal
    subtotal: Decimal
    total: Decimal
    tax_amount: Decimal = Decimal(0)
    product: ProductRef


class OrderPayment(Model):
    id: int
    amount: Decimal
    payment_type: Literal["in", "out"]
    payment_mode_id: int
    date: dt.date
    reference: str | None


class Party(Model):
    id: int
    name: str
    phone: str | None = None


class Order(Model):
    """A sale, purchase or return, as listed (``items`` and ``payments`` empty) or
    read one at a time."""

    id: int
    xid: str
    unique_id: str
    invoice_number: str
    order_type: Literal["sales", "purchases", "sales-returns", "purchase-returns"]
    order_date: dt.date
    subtotal: Decimal
    tax_amount: Decimal
    discount: Decimal
    shipping: Decimal
    total: Decimal
    paid_amount: Decimal
    due_amount: Decimal
    order_status: str
    payment_status: PaymentStatus
    notes: str
    user: Party
    staff_member: Named | None = None
    original_order_id: int | None = None
    items: list[OrderLine] = []
    payments: list[OrderPayment] = []
    # A document in a foreign currency (DESIGN §16); None for a base-currency one.
    currency: str | None = None
    exchange_rate: Decimal | None = None
    base_total: Decimal | None = None
    base_due: Decimal | None = None


class SaleCreated(Model):
    order_id: int
    invoice_number: str
    total_amount: Decimal
    unique_id: str
    payment_status: PaymentStatus
    paid_amount: Decimal
    due_amount: Decimal
    # A document in a foreign currency (DESIGN §16); None for a base-currency one.
    currency: str | None = None
    exchange_rate: Decimal | None = None
    base_total: Decimal | None = None
    base_due: Decimal | None = None


class PurchaseCreated(Model):
    purchase_id: int
    invoice_number: str
    payment_status: PaymentStatus
    total: Decimal
    due_amount: Decimal
    # A document in a foreign currency (DESIGN §16); None for a base-currency one.
    currency: str | None = None
    exchange_rate: Decimal | None = None
    base_total: Decimal | None = None
    base_due: Decimal | None = None


class ReturnCreated(Model):
    return_id: int
    invoice_number: str
    total: Decimal
    tax_amount: Decimal
    original_order_id: int | None
    # A document in a foreign currency (DESIGN §16); None for a base-currency one.
    currency: str | None = None
    exchange_rate: Decimal | None = None
    base_total: Decimal | None = None
    base_due: Decimal | None = None


class StockAdjustment(Model):
    id: int
    product_id: int
    quantity: Decimal
    adjustment_type: Literal["add", "subtract"]
    notes: str
    cost_amount: Decimal
    created_at: dt.datetime
    product: ProductRef
    creator: Named | None


class StockAdjustmentCreated(Model):
    adjustment_id: int
    new_stock_level: Decimal


class PriceChange(Model):
    product_id: int
    old_price: Decimal
    new_price: Decimal


class PriceAdjustmentBatch(Model):
    id: int
    invoice_number: str
    date: dt.date
    notes: str
    items: list[PriceChange] = []


class PriceAdjustmentCreated(Model):
    batch_invoice: str
    new_price: Decimal
    batch_id: int


class Allocation(Model):
    order_id: int
    invoice_number: str
    amount: Decimal
    due_amount: Decimal
    payment_status: PaymentStatus


class Payment(Model):
    payment_id: int
    payment_type: Literal["in", "out"]
    user_id: int
    amount: Decimal
    unallocated_amount: Decimal
    payment_mode_id: int
    date: dt.date
    reference: str | None
    notes: str
    journal_entry_id: int | None
    allocations: list[Allocation]
    # In a foreign currency (DESIGN §16): the amount's currency, rate and base value.
    currency: str | None = None
    exchange_rate: Decimal | None = None
    base_amount: Decimal | None = None


class OutstandingInvoice(Model):
    order_id: int
    xid: str
    invoice_number: str
    order_type: Literal["sales", "purchases"]
    order_date: dt.date
    total: Decimal
    paid_amount: Decimal
    due_amount: Decimal
    payment_status: PaymentStatus


class InvoiceParty(Model):
    id: int
    name: str
    user_type: Literal["customer", "supplier"]
    balance: Decimal


class UserInvoices(Model):
    user: InvoiceParty
    invoices: list[OutstandingInvoice]
    total_due: Decimal


class Expense(Model):
    id: int
    amount: Decimal
    date: dt.date
    status: Literal["paid", "pending"]
    notes: str


class ExpenseCreated(Model):
    expense_id: int
    expense_status: Literal["paid", "pending"]
    journal_entry_id: int | None
    amount: Decimal
    # In a foreign currency (DESIGN §16): the amount's currency, rate and base value.
    currency: str | None = None
    exchange_rate: Decimal | None = None
    base_amount: Decimal | None = None


# --- events ------------------------------------------------------------------------


class ProductUpdated(Model):
    """A listing's change (``id`` set, every listing field present) or a category's
    or brand's change (``reason``, ``changed`` and ``product_ids`` set, no ``id``)."""

    id: int | None = None
    xid: str | None = None
    name: str | None = None
    item_code: str | None = None
    barcode: str | None = None
    unit_id: int | None = None
    category_id: int | None = None
    brand_id: int | None = None
    tax_id: int | None = None
    sales_price: Decimal | None = None
    purchase_price: Decimal | None = None
    mrp: Decimal | None = None
    current_stock: Decimal | None = None
    active: bool | None = None
    reason: str | None = None
    changed: list[str] | None = None
    product_ids: list[int] | None = None


class StockDiscrepancy(Model):
    product_id: int
    name: str
    item_code: str
    quantity_short: Decimal
    current_stock: Decimal
    order_id: int | None = None
    invoice_number: str | None = None


EventData = Order | Payment | ProductUpdated | StockAdjustment | StockDiscrepancy

EVENT_DATA: dict[str, type[Model]] = {
    "order.created": Order,
    "sales.created": Order,
    "order.paid": Order,
    "purchase.created": Order,
    "return.created": Order,
    "payment.created": Payment,
    "product.updated": ProductUpdated,
    "stock.adjusted": StockAdjustment,
    "stock.discrepancy": StockDiscrepancy,
}


class Event(Model):
    """A webhook delivery's body. ``data`` is typed by ``type`` (``EVENT_DATA``);
    an event type this version does not know keeps ``raw_data`` only."""

    id: str
    type: str
    created_at: dt.datetime
    company_id: int
    warehouse_id: int | None
    raw_data: dict[str, Any]
    data: EventData | None

    @classmethod
    def parse(cls, payload: dict[str, Any]) -> Event:
        raw = payload.get("data") or {}
        model = EVENT_DATA.get(str(payload.get("type")))
        data = model.model_validate(raw) if model is not None else None
        return cls(
            id=payload["id"],
            type=payload["type"],
            created_at=payload["created_at"],
            company_id=payload["company_id"],
            warehouse_id=payload.get("warehouse_id"),
            raw_data=raw,
            data=data,
        )
