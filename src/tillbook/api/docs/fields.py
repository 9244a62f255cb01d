"""What every property and parameter of the document means, by name.

``FIELDS`` maps a property (or parameter) name to its description and an example
value; ``OVERRIDES`` maps ``(component schema name, property name)`` to the
description where the name means something else there (``user_id`` is the
customer of a sale, the supplier of a purchase, the party of a payment), and
``PARAMETER_OVERRIDES`` does the same for a parameter of one path. A name shared by
unrelated things (``status``, ``reason``, ``format``) gets a description on each
schema or path, never one copied from elsewhere: ``CHOICES`` gives a query
parameter that takes one of a fixed set its enum, from the ``Literal`` type the
code checks it with, and the document test refuses a description naming values
the enum does not hold.
A description the model already carries (``Field(description=...)``) is kept
(after the override's text, when there is one).

Units and forms, as the service answers them (spec, DESIGN.md §3): money in
orders, payments and balances is a **decimal string** with two places
(``"12.50"``); product prices, stock and line quantities are JSON **numbers**;
a stock adjustment's quantity is a decimal string with four places. Request
bodies take money and quantities as JSON numbers or decimal strings. Quantities
are in the product's base unit unless a line names ``selected_unit_id`` (then in
that unit: a box of 12). Dates are ``YYYY-MM-DD``; times ISO 8601 in UTC.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, get_args

from tillbook.events.webhook_service import DeliveryStatus
from tillbook.inventory.counts import CountStatus
from tillbook.inventory.transfers import TransferStatus
from tillbook.orders.receipts import ReceiptFormat, ReceiptSize, ReceiptWidth
from tillbook.orders.schemas import POFilter
from tillbook.reports.ledgers import LedgerFormat

MONEY = "a decimal string with two places"
NUM_IN = "a JSON number or a decimal string"


@dataclass(frozen=True)
class Entry:
    description: str
    example: Any = None


def e(description: str, example: Any = None) -> Entry:
    return Entry(description, example)


FIELDS: dict[str, Entry] = {
    # identity
    "id": e("the record's integer id", 1),
    "xid": e("the record's string hash id (accepted wherever an id is)", "xIgUnTvy"),
    "name": e("display name", "Sparkling water 500ml"),
    "slug": e("URL-safe name, unique in the company", "sparkling-water-500ml"),
    "code": e("short code, unique per company and kind", "C-001"),
    "short_name": e("abbreviation printed on receipts", "pc"),
    "version": e(
        "the record's version: every edit adds 1; send it back as If-Match (or a body "
        "`version`) to edit",
        1,
    ),
    "archived": e("true once archived: kept for history, no longer used in new documents", False),
    "archived_at": e("when the record was archived (UTC), or null", None),
    "created_at": e("when the record was created (ISO 8601, UTC)", "2026-11-20T09:30:00Z"),
    "unique_id": e(
        "client idempotency token (or generated): a retry with the same token within 24 h "
        "returns the first answer",
        "till1-2026-11-20-0042",
    ),
    "status": e("`success`, or `error` on an error body", "success"),
    "message": e("what went wrong, in words", "product_items.0.quantity: must be above 0"),
    "errors": e("for a 422: each bad field (dotted path) with its problems", None),
    "request_id": e("the request id to quote to support (also X-Request-Id)", "4f1c2d9a8b7e6f50"),
    "data": e("the payload: a record, a list, or a page", None),
    # pagination
    "current_page": e("this page's number, from 1", 1),
    "per_page": e("records per page (the `limit` asked, at most 100)", 20),
    "total": e(
        "total amount of the document (tax, discount and shipping applied), " + MONEY, "21.80"
    ),
    "last_page": e("the number of the last page (1 when empty)", 1),
    "page": e("page number, from 1 (default 1)", 1),
    "limit": e(
        "page size, 1 to 100 (default 20); larger values are clamped to 100; a change "
        "feed (with updated_since or cursor) takes up to 1000 (default 100)",
        20,
    ),
    "search": e("matches name, item code or barcode (case-insensitive)", "milk"),
    "include_archived": e("`true` to include archived records (default false)", "false"),
    "dates": e(
        "a date range `YYYY-MM-DD,YYYY-MM-DD` (both days included)", "2026-11-01,2026-11-30"
    ),
    # catalog
    "item_code": e("the product's SKU or primary code, unique in the company", "GB-1001"),
    "barcode": e("the primary barcode, or null", "5550001"),
    "barcodes": e("every barcode of the product", ["5550001"]),
    "product_type": e("`single` (batch-tracked products are still `single`)", "single"),
    "sales_price": e("this warehouse's selling price per base unit (JSON number)", 2.2),
    "purchase_price": e("this warehouse's cost price per base unit (JSON number)", 1.1),
    "mrp": e("maximum retail price printed on the pack (JSON number), or null", 2.49),
    "current_stock": e("stock on hand in the warehouse, in base units (JSON number)", 12),
    "reorder_level": e("stock level (base units) at which to reorder", 5),
    "active": e("whether the product is still sold in this warehouse", True),
    "has_additional_units": e(
        "true when the product is also sold in other units (GET the detail)", False
    ),
    "additional_units": e("other units the product is sold in (a box of 12)", []),
    "child_unit_id": e("the xid of the other unit", "RfkfWDpa"),
    "operator": e("how the unit converts to base units: `*` (multiply)", "*"),
    "operator_value": e("base units in one of this unit (12 for a box of 12)", 12),
    "alternative_price": e("the price of one of this unit (JSON number)", 10.0),
    "description": e("free text", ""),
    "image": e("an image URL, or null", None),
    "category": e("the product's category", None),
    "brand": e("the product's brand", None),
    "unit": e("the product's base unit", None),
    "children": e("child categories (empty for a leaf)", []),
    "parent_id": e("the parent category's id, or null for a root", None),
    "category_id": e("a category id or xid", None),
    "brand_id": e("a brand id or xid", None),
    "unit_id": e("a unit id (the unit the line was sold in, or the base unit)", 1),
    "tax_id": e("a tax rule id or xid (omit for the product's own tax)", None),
    "batches": e("the FIFO batches still holding stock", []),
    "batch_number": e("a batch or lot number, or null", None),
    "batch_id": e("the FIFO batch (layer) id", 1),
    "expiry_date": e("batch expiry date (YYYY-MM-DD), or null", None),
    "quantity_remaining": e("base units still in the batch", 10),
    "unit_cost": e("cost per base unit of the batch (JSON number)", 1.1),
    "received_at": e("when the batch was received (UTC)", "2026-11-20T09:30:00Z"),
    "listings": e("the product's listing in each warehouse that sells it", []),
    "warehouse_id": e("a warehouse id", 1),
    "opening_stock": e("opening stock in base units, posted once at the listing's creation", 0),
    "value": e("the stock's value at cost, " + MONEY, "13.20"),
    # taxes, modes, categories
    "rate": e("tax rate in percent (10 for 10%)", 10),
    "inclusive": e("true when prices already include the tax", False),
    "tax_rate": e("the tax rate charged on the line, percent", 0),
    "account_code": e("the ledger account money of this kind posts to", "11101"),
    "account_name": e("that account's name", "Cash on Hand"),
    "create_account": e("create a new ledger account under the expense range for it", False),
    # parties
    "phone": e("phone number, or null", "555-0101"),
    "email": e("email address, or null", "ada@example.com"),
    "address": e("postal address, or null", None),
    "tax_number": e("tax registration number, or null", None),
    "credit_limit": e(
        "the most the customer may owe in a warehouse, " + MONEY + ", or null for no limit", None
    ),
    "opening_balance": e(
        "balance owed at creation, posted once against 31100 Opening Balance Equity", "0.00"
    ),
    "is_walk_in": e("true for the company's walk-in (anonymous) customer", False),
    "balance": e("what the party owes (customer) or is owed (supplier), " + MONEY, "0.00"),
    "user_type": e("`customer` or `supplier`", "customer"),
    "type": e("`customer` or `supplier`", "customer"),
    "user": e(
        "the order's party: the customer of a sale or return, the supplier of a purchase", None
    ),
    "staff_member": e("the staff member who recorded it: the key's acting user", None),
    "creator": e("who recorded it: the key's acting user", None),
    "role": e("`owner`, `manager`, `accountant` or `cashier` (see the role table)", "cashier"),
    "password": e("at least 8 characters; never echoed back", "correct horse battery"),
    "can_log_in": e("false once archived or without a password", True),
    "token": e("the session's bearer token: send `Authorization: Bearer <token>`", "tbs_…"),
    "token_type": e("always `Bearer`", "Bearer"),
    "expires_at": e("when the session ends (UTC)", "2026-11-20T17:30:00Z"),
    "company_id": e("the company (tenant) id", 1),
    "allow_negative_stock": e("whether sales may take stock below zero here", False),
    "receipt_header": e("text printed at the top of receipts, or null", None),
    "receipt_footer": e("text printed at the bottom of receipts, or null", None),
    "url": e("the receiver's https URL", "https://example.com/hooks/tillbook"),
    "events": e("event types to receive; omitted or `['*']` for all", ["order.created"]),
    "through": e("the last day to close (YYYY-MM-DD); null to reopen everything", "2026-10-31"),
    # orders
    "invoice_number": e(
        "the document's number (SAL-00001, PUR-00001, SRET-00001, PRET-00001); in a sale "
        "request, a deterministic client number makes a retry a replay",
        "SAL-00001",
    ),
    "order_type": e("`sales`, `purchases`, `sales-returns` or `purchase-returns`", "sales"),
    "order_date": e(
        "the document's date (YYYY-MM-DD); may not be in a closed period", "2026-11-20"
    ),
    "subtotal": e("sum of the lines before order discount and shipping, " + MONEY, "20.00"),
    "tax_amount": e("tax included in the total, " + MONEY, "1.80"),
    "discount": e("order-level discount amount (money, not percent)", "0.00"),
    "shipping": e("shipping charged (money)", "0.00"),
    "paid_amount": e("paid so far, " + MONEY, "21.80"),
    "due_amount": e("still owed: total − paid − credited, " + MONEY, "0.00"),
    "order_status": e(
        "`delivered` (sales), `received` (purchases), `returned` (returns)", "delivered"
    ),
    "payment_status": e("`unpaid`, `partially_paid` or `paid`", "paid"),
    "notes": e("free text", ""),
    "items": e("the lines, at least one", []),
    "product_items": e("the lines, at least one", []),
    "product": e("the product of the line", None),
    "product_id": e("a product id or xid", 1),
    "quantity": e(
        "quantity in the line's unit (`selected_unit_id`, else the product's base unit); "
        "decimals allowed",
        2,
    ),
    "base_quantity": e("the quantity in base units (quantity × the unit's operator_value)", 2),
    "unit_price": e("price per unit of the line, before discount and tax", "10.00"),
    "discount_rate": e("line discount in percent", 0),
    "selected_unit_id": e(
        "the unit sold in (id or xid of one of the product's additional units)", None
    ),
    "original_order_id": e("the sale or purchase a return refers to, or null", None),
    "payments": e("payments applied to the order", []),
    "all_payments": e(
        "tenders taken now (split tender: several); their sum may not exceed the total", []
    ),
    "payment_mode_id": e("a payment mode id, xid or code (`cash`, `card`)", "cash"),
    "payment_type": e("`in` (from a customer) or `out` (to a supplier)", "in"),
    "from_payment_mode_id": e(
        "the payment mode whose account the money leaves: id, xid or code", "cash"
    ),
    "to_payment_mode_id": e("the payment mode whose account receives it: id, xid or code", "bank"),
    "payment_amount": e("the whole payment's amount, " + MONEY, "21.80"),
    "amount": e("an amount of money, " + MONEY, "21.80"),
    "reference": e("external reference (terminal receipt, bank reference), or null", "RCPT-118"),
    "date": e("the date (YYYY-MM-DD); today when omitted", "2026-11-20"),
    "from_time": e(
        "the time of day it starts (HH:MM, the branch's clock), or null: all day", "17:00"
    ),
    "until_time": e("the time of day it stops, not included (HH:MM), or null", "19:00"),
    "invoices": e("allocations of the payment to the party's open invoices", []),
    "allocations": e("how the payment was applied to invoices", []),
    "unallocated_amount": e(
        "the part of the payment not applied to an invoice (on account), " + MONEY, "0.00"
    ),
    "journal_entry_id": e("the journal entry posted, or null", 12),
    "order_id": e("an order's id, xid or invoice number", 1),
    "total_due": e("sum of the invoices' due amounts, " + MONEY, "0.00"),
    # creation answers
    "total_amount": e("the sale's total (JSON number)", 21.8),
    "purchase_id": e("the purchase's id", 2),
    "current_status": e("a human summary of the purchase's state", "Purchase recorded"),
    "return_id": e("the return's id", 3),
    "adjustment_id": e("the stock adjustment's id", 1),
    "adjustment_type": e("`add` or `subtract`", "subtract"),
    "new_stock_level": e("stock on hand after the adjustment, base units (JSON number)", 10),
    "cost_amount": e("the adjustment's value at cost, " + MONEY, "2.40"),
    "new_sales_price": e("the new selling price per base unit, 0 or more", 2.4),
    "batch_invoice": e("the price batch's number (ADJ-BATCH-N)", "ADJ-BATCH-1"),
    "new_price": e("the new sales price (JSON number)", 2.4),
    "old_price": e("the sales price before (JSON number)", 2.2),
    "payment_id": e("the payment's id", 1),
    "expense_category": e("the expense category", None),
    "expense_category_id": e("an expense category id or xid", 1),
    "expense_id": e("the expense's id", 1),
    "expense_status": e("`paid` (posted against cash) or `pending` (against payables)", "paid"),
    "callback_status": e("`confirmed` or `failed`", "confirmed"),
    "duplicate": e("true when this reference was processed before", None),
    # admin results
    "created": e("rows that created a record", 0),
    "updated": e("rows that changed a record", 0),
    "unchanged": e("rows equal to what is stored", 0),
    # events
    "quantity_short": e("units taken beyond what was on hand", 6),
    "changed": e("the fields of the category or brand that changed", []),
    "product_ids": e("the products the change touches", []),
    "reason": e("why, in the words of who did it", None),
    "timezone": e("the branch's IANA time zone", "Europe/Madrid"),
    # parameters
    "ref": e("an id or xid", "xIgUnTvy"),
    "user_id": e("the customer or supplier: id or xid", 2),
    "from": e("first day of the range, YYYY-MM-DD (included)", "2026-11-01"),
    "to": e("last day of the range, YYYY-MM-DD (included; default today)", "2026-11-30"),
    "entity_type": e("the kind of record changed (`product`, `customer`, `staff`…)", "product"),
    "entity_id": e("the id of the record changed", 1),
    "cursor": e("`next_cursor` of the previous page: continues from there", None),
    "account": e("the ledger account code", "11101"),
    "provider": e("the terminal provider's xid (from `tillbook terminals add`)", "xIgUnTvy"),
    "record_id": e("the record's id", 1),
    "party_id": e("the customer's or supplier's id", 1),
    "staff_id": e("the staff member's id", 1),
    "webhook_id": e("the webhook's id", 1),
    "delivery_id": e("the delivery's id", 1),
    "Idempotency-Key": e(
        "client token: a retry with the same token and body within 24 h replays the first "
        "answer (`Idempotent-Replayed: true`); another body with it is a 422",
        "7d1f0c8e-4b5a-4d6e-9f3c-2a1b0c9d8e7f",
    ),
    "next_cursor": e(
        "pass as `cursor` for the next page of changes; null when this was the last",
        None,
    ),
    "sync_token": e(
        "send as `updated_since` next time to get what changed since this walk began "
        "(a minute early, so a late commit is not missed: upsert by id)",
        "2026-11-20T09:29:00Z",
    ),
    "updated_since": e(
        "only records changed at or after this instant (ISO 8601), archived ones as "
        "tombstones; the answer is then a change feed",
        "2026-11-20T09:29:00Z",
    ),
    "count_id": e("the stocktake's id", 1),
    "po_id": e("the purchase order's id", 1),
    "item_codes": e("products by item code or barcode", ["AJ-001"]),
    "If-Match": e('the version the edit is based on, as the ETag read (`"3"`)', '"1"'),
}

# The register (DESIGN.md §15).
FIELDS.update(
    {
        "prefix": e("the register's prefix, the start of its invoice numbers", "R1"),
        "warehouse_name": e("the branch's name", "Main street"),
        "company_name": e("the company's name", "Corner Shop"),
        "base_currency": e("the company's currency (ISO 4217)", "USD"),
        "money_format": e("how the back office writes amounts", "1,234.56"),
        "last_invoice_number": e(
            "the highest invoice number of this register's prefix the server holds, or null",
            "R1-000123",
        ),
        "open_shift": e("the register's open shift (id and reference), or null", None),
        "may_refund_without_invoice": e(
            "whether this cashier's PIN allows a return without an invoice (owner, manager)",
            False,
        ),
        "pin": e("the PIN's PBKDF2 parameters (register cashiers), or the PIN to set", None),
        "algorithm": e("always `PBKDF2-SHA256`", "PBKDF2-SHA256"),
        "iterations": e("PBKDF2 iterations", 100000),
        "salt": e("the salt, base64 (16 bytes)", "q1w2e3r4t5y6u7i8o9p0aa=="),
        "hash": e("PBKDF2-HMAC-SHA256 of the PIN, base64 (32 bytes)", None),
        "server_time": e("the server's clock (ISO 8601, UTC)", "2026-11-20T09:30:00Z"),
        "queued": e("writes the register holds queued, not yet sent", 0),
        "attention": e("writes the server refused, as the register keeps them", []),
        "key": e("the refused write's Idempotency-Key", "register-R1-sale-000123"),
        "kind": e("what the write was: `sale`, `return`, `shift`, `customer`…", "sale"),
        "number": e("its invoice number or reference, or null", "R1-000123"),
        "at": e("when it was refused (ISO 8601)", "2026-11-20T09:30:00Z"),
        "register_id": e("the register's id", 1),
        "last_seen_at": e("when the register last reported (ISO 8601, UTC), or null", None),
        "revoked_at": e("when it was revoked (ISO 8601, UTC), or null while active", None),
        "public_key": e("the register's public key (`X-Service-Public-Key`)", "pk_…"),
        "secret_key": e(
            "the register's secret key, shown in the pairing's answer only (null on a replay)",
            "sk_…",
        ),
        "company": e("the company the register sells for", None),
        "has_pin": e("whether the staff member has a register PIN", False),
    }
)

# Currencies and exchange rates (DESIGN §16).
FIELDS.update(
    {
        "currency": e("an ISO 4217 currency code (upper or lower case)", "EUR"),
        "minor_units": e("the currency's decimal places (JPY 0, EUR 2, KWD 3)", 2),
        "base_minor_units": e("the base currency's decimal places", 2),
        # A foreign order's answers (``orders/currency.py`` ``ForeignFigures``);
        # absent from a base-currency order's.
        "exchange_rate": e(
            "a foreign order's rate: base units per one unit of its currency, exact", "1.085"
        ),
        "base_total": e("a foreign order's total in the base currency, " + MONEY, "13.56"),
        "base_due": e(
            "what a foreign order still owes, in the base currency at its own rate, " + MONEY,
            "0.00",
        ),
        # A foreign payment's and expense's (``payments/service.py``, ``expenses.py``).
        "base_amount": e("the amount in the base currency at that rate, " + MONEY, "23.65"),
        "due_by_currency": e(
            "the foreign invoices' dues, by currency (absent when there are none)",
            {"EUR": "12.50"},
        ),
        "enabled": e("whether new documents may be in this currency", True),
        "latest_rate": e(
            "the currency's newest rate (base units per one unit of it), or null", "1.085"
        ),
        "latest_rate_date": e("the date that rate applies from, or null", "2026-11-20"),
        "superseded": e(
            "a later entry for the same currency and date replaced this one (kept for "
            "the documents posted while it was in force)",
            False,
        ),
        "corrects": e("this entry replaced an earlier one for the same date", False),
        "entered_at": e("when the rate was entered (ISO 8601, UTC)", "2026-11-20T09:30:00Z"),
        "source": e("how the rate was entered: `manual` or `import`", "manual"),
        "imported": e("how many rates the file held, all recorded", 12),
        "corrections": e(
            "true: every entry, the corrected ones too (marked `superseded`); default "
            "false: of each date the rate in force",
            "true",
        ),
    }
)

OVERRIDES: dict[tuple[str, str], str] = {
    ("ExchangeRateIn", "rate"): "base units per one unit of `currency` (1.085: one EUR is "
    "1.085 of the base): above 0, at most 8 decimal places",
    ("AdminExchangeRate", "rate"): "base units per one unit of `currency`, exact",
    ("ExchangeRateIn", "date"): "the first day the rate applies (YYYY-MM-DD); it holds "
    "until a later date's rate",
    ("AdminExchangeRate", "date"): "the first day the rate applies (YYYY-MM-DD)",
    ("Refused", "reason"): "why the server refused it, as its answer said",
    ("ShiftIn", "reference"): "the register's own reference for the shift (R1-S000007), "
    "unique in the branch: opening it again answers the shift already opened",
    ("SaleIn", "staff_member"): "the cashier who rang it up: a staff member of this branch "
    "(default: the key's own)",
    ("ReturnIn", "staff_member"): "the cashier who took the return: a staff member of this "
    "branch (default: the key's own)",
    ("SaleIn", "offline"): "rung up by a register while offline: taken even below zero "
    "stock, with a stock discrepancy alert; a register's credential only",
    # stock transfers
    ("Transfer", "from_warehouse"): "the branch that sent the stock",
    ("Transfer", "to_warehouse"): "the branch that receives it",
    ("Transfer", "dispatched_at"): "when the stock left the sender (UTC)",
    ("Transfer", "closed_at"): "when it was received or cancelled (UTC), or null in transit",
    ("TransferBatch", "quantity_received"): "base units of this batch received",
    ("TransferItem", "quantity_received"): "base units received so far",
    ("TransferWritten", "transfer_id"): "the transfer's id",
    ("TransferWritten", "transfer_status"): "`dispatched`, `received` or `cancelled`",
    # stocktakes
    ("PurchaseOrderIn", "expected_date"): "when the goods are expected (YYYY-MM-DD)",
    ("PurchaseOrderIn", "lines"): "the products ordered, in base units, at the expected cost",
    ("PurchaseOrderReceiptIn", "lines"): "what came of the ordered products (default cost: "
    "the order's)",
    ("StockCountIn", "scope"): "`all` (every product listed in the branch), `category` or `list`",
    ("CountEntryIn", "counted"): "base units counted (" + NUM_IN + "); null: not counted",
    # till operations: void, shifts, receipts
    ("OrderDetail", "voided_at"): "when the sale was voided (UTC), or null",
    ("OrderFigures", "count"): "how many documents of this kind the shift holds",
    ("OrderCancelled", "voided_at"): "when the sale was voided (UTC)",
    ("OrderCancelled", "reversing_entry_id"): "the journal entry that reverses the sale's own, "
    "or null for a sale that posted none",
    ("SaleVoided", "void_reason"): "why the sale was voided, as the till sent it",
    ("SaleVoided", "reversing_entry_id"): "the journal entry that reverses the sale's own",
    ("SaleVoided", "refunds"): "each tender refunded to its payment mode",
    ("ShiftCashItem", "direction"): "`in` (a float top-up) or `out` (petty cash, a drop)",
    ("ShiftCashIn", "direction"): "`in`: into the drawer from another mode's account; "
    "`out`: to an expense category or another mode's account",
    ("ShiftExpected", "counted"): "what was counted at close, " + MONEY + ", or null while open",
    ("ShiftExpected", "difference"): "counted minus expected (over is positive), "
    + MONEY
    + ", or null while open",
    ("ShiftHead", "status"): "`open` or `closed`",
    ("ShiftReport", "status"): "`open` (an X report) or `closed` (a Z report)",
    ("ShiftCashIn", "reason"): "what the cash is for (a float top-up, milk, a bank drop)",
    ("ShiftCashItem", "reason"): "what the cash was for, as the till sent it",
    ("VoidIn", "reason"): "why the sale is voided (kept with the void and in the audit log)",
    ("Transfer", "status"): "`dispatched` (in transit), `received` or `cancelled`",
    ("Transfer", "reason"): "why less was received, or why it was cancelled, or null",
    ("TransferReceiptIn", "reason"): "why less than was sent is received (broken, missing)",
    ("TransferCancelIn", "reason"): "why the transfer is cancelled",
    ("CallbackIn", "status"): "`confirmed` (the terminal took the money) or `failed`",
    ("CategoryChangeEventData", "reason"): "`category.updated` (renamed, moved, re-imaged) "
    "or `category.archived`",
    ("CategoryChangeEventData", "category"): "the category after the change, as the admin "
    "API shows it, with `archived`",
    ("BrandChangeEventData", "reason"): "`brand.updated` or `brand.archived`",
    ("BrandChangeEventData", "brand"): "the brand after the change, as the admin API shows "
    "it, with `archived`",
    ("ProductListingEventData", "active"): "whether the product can be sold in this "
    "warehouse now: not archived, and its listing here active",
    ("ProductListingEventData", "current_stock"): "the stock on hand in this warehouse, in "
    "the product's base unit",
    ("ShiftIn", "register"): "the till (register) to open the shift on (default `main`)",
    ("ShiftReport", "report"): "`X` (mid-shift, while open) or `Z` (closed)",
    ("ShiftReport", "sales"): "the sales made in the shift",
    ("ShiftReport", "returns"): "the sales returns made in the shift",
    ("ShiftReport", "voids"): "the sales voided in the shift",
    ("ShiftReport", "tax_by_rate"): "net sales and tax per tax rate",
    ("ShiftReport", "tenders"): "what was taken per payment mode",
    ("ShiftReport", "cash_movements"): "cash paid into and out of the drawer",
    ("ShiftReport", "expected"): "per payment mode: expected, counted, difference",
    ("ShiftReport", "over_short"): "the drawer's difference posted to 52500 Cash Over/Short, "
    + MONEY
    + ", or null while open",
    ("ShiftIn", "opening_float"): "cash in the drawer at opening, " + NUM_IN,
    ("ShiftCloseIn", "counted"): "the amount counted per payment mode (the drawer's mode at least)",
    ("WarehouseIn", "require_shift"): "sales in this warehouse need an open till shift",
    ("AdminWarehouse", "require_shift"): "sales in this warehouse need an open till shift",
    ("WarehouseIn", "timezone"): "the branch's IANA time zone (e.g. Europe/Madrid; default UTC)",
    ("WarehousePatch", "timezone"): "the branch's IANA time zone (e.g. Europe/Madrid)",
    ("AdminWarehouse", "timezone"): "the branch's IANA time zone: times on its pages are on "
    "this clock",
    ("WarehousePatch", "require_shift"): "sales in this warehouse need an open till shift",
    ("SaleIn", "user_id"): "the customer: id or xid (the walk-in customer's for anonymous sales)",
    ("PurchaseIn", "user_id"): "the supplier: id or xid",
    ("PaymentIn", "user_id"): "the party paid or paying: a customer for `in`, a supplier for `out`",
    ("BranchPaymentIn", "user_id"): "the party paid or paying: a customer for `in`, a "
    "supplier for `out`",
    ("BranchExpenseIn", "user_id"): "the supplier owed for a pending expense (optional)",
    ("SalesReturnIn", "user_id"): "the customer refunded: id or xid",
    ("PurchaseReturnIn", "user_id"): "the supplier credited: id or xid",
    ("ExpenseIn", "user_id"): "the supplier owed for a pending expense (optional)",
    ("Expense", "user_id"): "the supplier the expense is owed to, or null",
    ("PaymentCreated", "user_id"): "the party of the payment",
    ("PaymentEventData", "user_id"): "the party of the payment",
    ("SaleCreated", "order_id"): "the new sale's id",
    ("Allocation", "order_id"): "the invoice the amount was applied to",
    ("OutstandingInvoice", "order_id"): "the invoice's order id",
    ("CallbackResult", "order_id"): "the sale the callback settled",
    ("Allocation", "amount"): "the part of the payment applied to this invoice, " + MONEY,
    ("Allocation", "due_amount"): "the invoice's due after this payment, " + MONEY,
    ("StockAdjustment", "quantity"): "base units added or removed, a decimal string with 4 places",
    ("StockAdjustmentIn", "quantity"): "base units to add or remove, at least 0.01 ("
    + NUM_IN
    + ")",
    ("OrderLine", "quantity"): "quantity in the line's unit (`unit_id`), JSON number",
    ("OrderLine", "unit_price"): "price per line unit before discount and tax, decimal string",
    ("OrderLine", "total"): "the line's total with tax, " + MONEY,
    ("OrderLine", "subtotal"): "the line's amount after discount, before exclusive tax, " + MONEY,
    ("OrderLine", "tax_amount"): "the line's tax, " + MONEY,
    ("ProductRef", "id"): "the product's id",
    ("Named", "id"): "the party's or user's id",
    ("Named", "name"): "their name",
    ("Customer", "balance"): "what the customer owes in the key's warehouse, " + MONEY,
    ("InvoiceParty", "balance"): "what the party owes, or is owed, in the key's warehouse, "
    + MONEY,
    ("AdminParty", "balance"): "what the party owes or is owed, company-wide, " + MONEY,
    ("AdminParty", "credit_limit"): "the customer's credit limit, " + MONEY + ", or null",
    ("Expense", "status"): "`paid` or `pending`",
    ("Expense", "amount"): "the expense's amount, " + MONEY,
    ("PurchaseCreated", "total"): "the purchase's total, " + MONEY,
    ("ReturnCreated", "total"): "the refund's total, tax included, " + MONEY,
    ("ExpenseCreated", "amount"): "the expense's amount, " + MONEY,
    ("OpeningStock", "quantity"): "base units received as opening stock (JSON number)",
    (
        "StaffMember",
        "warehouse_id",
    ): "the one warehouse the staff member is limited to, or null for all",
    ("StaffIn", "warehouse_id"): "limit the staff member to one warehouse (not for owners)",
    ("StaffPatch", "warehouse_id"): "limit to one warehouse; null removes the limit",
    ("AdminRegister", "status"): "`active`, or `revoked` (its credential refused)",
    ("PairedRegister", "status"): "`active` (just paired)",
    ("ErrorBody", "status"): "always `error`",
    ("ValidationErrorBody", "status"): "always `error`",
    ("InternalErrorBody", "status"): "always `error`",
}


# A change feed's page may be larger than a list's.
OVERRIDES.update(
    {
        (f"Changes_{item}_", "per_page"): "records per page (the `limit` asked, at most 1000)"
        for item in (
            "ProductChange",
            "BrandChange",
            "FlatCategory",
            "TaxChange",
            "PaymentModeChange",
            "CustomerChange",
        )
    }
)

# A product's own tax, in the lists, the change feed and the detail.
OVERRIDES.update(
    {
        (schema, "tax_id"): "the product's own tax rule id (null: none); what a sale line "
        "takes when it names no `tax_id`"
        for schema in ("ProductListItem", "ProductChange", "ProductDetail")
    }
)

# A batch price change (``catalog.batch_prices``), previewed and applied alike.
OVERRIDES.update(
    {
        (schema, name): text
        for schema in ("PriceChangeBody", "PriceChangeApplyIn")
        for name, text in {
            "warehouse_ids": "the branches whose listings change (ids or xids, at least one)",
            "scope": "which products: `search` (name or item code contains the search "
            "text), `category` (the category_id) or `list` (the item_codes)",
            "target": "which price moves: `sales` (default), `purchase` or `both`",
            "method": "`set` every price to the value, move it by an `amount` or by a "
            "`percent` (negative: down)",
            "value": "the new price (`set`), the amount or the percentage; " + NUM_IN,
            "step": "round each new price half-up to a multiple of this: 0.01 (default), "
            "0.05, 0.10, 0.50 or 1.00",
            "search": "with `scope` search: part of a product's name or item code",
            "category_id": "with `scope` category: the category (id or xid)",
            "item_codes": "with `scope` list: the products' item codes",
            "notes": "why, kept with the change in its history",
            "fingerprint": "the `fingerprint` the preview answered: the change is applied "
            "only if no price it covers moved since",
        }.items()
    }
)
OVERRIDES[("ReceiptLineIn", "tax_id")] = (
    "the tax the supplier charged on the line (a tax id or xid of the company; its rate, "
    "inclusive or not, applies to the unit cost); omitted: no tax"
)

# A shift's head and its X/Z report share these fields.
OVERRIDES.update(
    {
        (schema, name): text
        for schema in ("ShiftHead", "ShiftReport")
        for name, text in {
            "register": "the till (register) the shift runs on",
            "cash_payment_mode_id": "the drawer's payment mode",
            "opened_by": "the staff member who opened it (the key's user)",
            "opened_at": "when the shift was opened (UTC)",
            "closed_at": "when the shift was closed (UTC), or null while open",
        }.items()
    }
)

# Gift cards and store credit (DESIGN §18).
OVERRIDES.update(
    {
        ("GiftCardData", "kind"): "`card` (a gift card, bought with a code) or `credit` (a "
        "customer's store credit, from returns)",
        ("GiftCardData", "status"): "`active` (may be spent while something is left) or "
        "`expired` (its rest moved to 41500 Breakage Income)",
        ("GiftCardData", "code"): "the new card's code in full (code_in_full true: this first "
        "answer only, to print on the receipt), otherwise masked to its last four",
        ("GiftCardData", "code_in_full"): "the card's whole code: in the answer that issues "
        "it only (a replay or a read shows the masked code)",
        ("GiftCardData", "expires_on"): "the last day the card may be spent (YYYY-MM-DD), "
        "or null: no expiry",
        ("GiftCardData", "customer_id"): "the customer the card or credit belongs to, or null",
        ("GiftCardData", "customer_name"): "that customer's name, or null",
        ("GiftCardBalanceData", "expires_on"): "the last day the card may be spent, or null",
        ("GiftCardBalanceData", "usable"): "whether the card can be spent today (not "
        "expired, something left)",
        ("CustomerPointsData", "customer_id"): "the customer's id",
        ("CustomerPointsData", "customer_name"): "the customer's name",
    }
)

# Promotions (DESIGN §18): the request and the shape the register's feed sends.
_PROMOTION = {
    "targets": "the product, category or brand ids `applies_to` names (none for `all`)",
    "starts_on": "its first day (YYYY-MM-DD, the branch's calendar)",
    "ends_on": "its last day, or null: until ended",
    "weekdays": "the ISO weekdays it runs on, 1 Monday … 7 Sunday",
    "priority": "0–1000, higher first: a line takes one promotion, the first to claim it",
    "combines": "whether it runs beside the others; if not, it competes alone and the "
    "larger discount for the customer wins",
}
OVERRIDES.update(
    {
        (model, name): text
        for model in ("PromotionItem", "PromotionChange")
        for name, text in _PROMOTION.items()
    }
)
OVERRIDES.update(
    {
        ("PromotionIn", "targets"): _PROMOTION["targets"],
        ("PromotionIn", "starts_on"): _PROMOTION["starts_on"],
        ("PromotionIn", "priority"): _PROMOTION["priority"],
        ("PromotionIn", "buy"): "buy_x_get_y: the units bought for each group",
        ("PromotionIn", "get"): "buy_x_get_y: the units given with them (the cheapest)",
        ("PromotionIn", "tiers"): "quantity_break: the tiers; the highest one reached applies",
        ("PromotionPatch", "ends_on"): "its new last day: today at the earliest",
        ("Tier", "min_quantity"): "the quantity of its lines together from which it applies",
        ("Tier", "percent"): "the share off each of its lines",
    }
)

_RECEIPT_FORMAT = "`html` (default: a page to print) or `text` (plain text for ESC/POS printers)"
_LEDGER_FORMAT = "`json` (default: a page) or `csv` to stream the whole range as a download"

PARAMETER_OVERRIDES: dict[tuple[str, str], str] = {
    ("/api/v1/admin/currencies/{code}/disable", "code"): "the currency's ISO 4217 code",
    ("/api/v1/admin/exchange-rates", "currency"): "only this currency's rates (ISO 4217)",
    ("/api/v1/public/sales/{order_id}/receipt", "format"): _RECEIPT_FORMAT,
    ("/api/v1/public/sales-returns/{order_id}/receipt", "format"): _RECEIPT_FORMAT,
    ("/api/v1/admin/reports/ledger", "format"): _LEDGER_FORMAT,
    ("/api/v1/admin/reports/statement", "format"): _LEDGER_FORMAT,
    ("/api/v1/public/stock-transfers", "status"): "only transfers in this state: "
    "`dispatched`, `received` or `cancelled`",
    ("/api/v1/admin/purchase-orders", "status"): "only orders in this state: `draft`, "
    "`ordered`, `partially_received`, `received`, `closed`, `cancelled`, or `open` "
    "(ordered or partially received: goods still to come)",
    ("/api/v1/admin/purchase-orders", "supplier_id"): "only the orders to this supplier",
    ("/api/v1/admin/stock-counts", "status"): "only stocktakes in this state: `draft` "
    "(being counted), `posted` or `cancelled`",
    ("/api/v1/admin/webhooks/deliveries", "status"): "only deliveries in this state: "
    "`pending`, `delivering`, `retrying`, `delivered` or `dead`",
    ("/api/v1/public/sales/{order_id}/receipt", "size"): "`80mm` (a till roll) or `a4`, "
    "for `format=html`",
    ("/api/v1/public/sales/{order_id}/receipt", "width"): "characters per line, 42 or 48, "
    "for `format=text` (ESC/POS printers)",
    ("/api/v1/public/sales/{order_id}/receipt", "tendered"): "the cash handed over, to "
    "print the change given (the books keep the amount applied)",
    ("/api/v1/public/sales-returns/{order_id}/receipt", "size"): "`80mm` or `a4`, for "
    "`format=html`",
    ("/api/v1/public/sales-returns/{order_id}/receipt", "width"): "characters per line, 42 "
    "or 48, for `format=text`",
    ("/api/v1/admin/audit", "user_id"): "the staff member who made the change",
    ("/api/v1/admin/gift-cards", "customer_id"): "only this customer's cards and credit",
    ("/api/v1/admin/gift-cards/{card_id}", "card_id"): "the card's id",
    ("/api/v1/admin/customers/{customer_id}/loyalty", "customer_id"): "the customer's id",
    ("/api/v1/public/customers/{customer_id}/loyalty", "customer_id"): "the customer's id or xid",
}


# Query parameters that take one of a fixed set, with the ``Literal`` type the code
# checks them against: the document's enum is that type's values.
CHOICES: dict[tuple[str, str], Any] = {
    ("/api/v1/public/sales/{order_id}/receipt", "format"): ReceiptFormat,
    ("/api/v1/public/sales/{order_id}/receipt", "size"): ReceiptSize,
    ("/api/v1/public/sales/{order_id}/receipt", "width"): ReceiptWidth,
    ("/api/v1/public/sales-returns/{order_id}/receipt", "format"): ReceiptFormat,
    ("/api/v1/public/sales-returns/{order_id}/receipt", "size"): ReceiptSize,
    ("/api/v1/public/sales-returns/{order_id}/receipt", "width"): ReceiptWidth,
    ("/api/v1/public/stock-transfers", "status"): TransferStatus,
    ("/api/v1/admin/webhooks/deliveries", "status"): DeliveryStatus,
    ("/api/v1/admin/stock-counts", "status"): CountStatus,
    ("/api/v1/admin/purchase-orders", "status"): POFilter,
    ("/api/v1/admin/reports/ledger", "format"): LedgerFormat,
    ("/api/v1/admin/reports/statement", "format"): LedgerFormat,
}


def _describe_properties(name: str, schema: dict[str, Any]) -> None:
    for prop, sub in (schema.get("properties") or {}).items():
        if not isinstance(sub, dict):
            continue
        text = OVERRIDES.get((name, prop))
        if text is not None and sub.get("description"):
            sub["description"] = f"{text} ({sub['description']})"
            continue
        if sub.get("description"):
            continue
        if text is None and prop in FIELDS and FIELDS[prop].description:
            text = FIELDS[prop].description
        if text is not None:
            sub["description"] = text
    for key in ("anyOf", "oneOf", "allOf"):
        for branch in schema.get(key, []):
            if isinstance(branch, dict):
                _describe_properties(name, branch)
    items = schema.get("items")
    if isinstance(items, dict):
        _describe_properties(name, items)


def describe(doc: dict[str, Any]) -> None:
    """A description on every component property and operation parameter that lacks
    one, from ``OVERRIDES`` then ``FIELDS`` (the document test names what neither
    covers)."""
    for name, schema in doc["components"]["schemas"].items():
        _describe_properties(name, schema)
        for prop in (schema.get("properties") or {}).values():
            if isinstance(prop, dict):
                _describe_properties(name, prop)  # inline objects
    for path, item in doc["paths"].items():
        for operation in item.values():
            for parameter in operation.get("parameters", []):
                choices = CHOICES.get((path, parameter["name"]))
                if choices is not None and parameter.get("in") == "query":
                    parameter["schema"] = {"type": "string", "enum": list(get_args(choices))}
                if not parameter.get("description"):
                    override = PARAMETER_OVERRIDES.get((path, parameter["name"]))
                    if override is not None:
                        parameter["description"] = override
                        continue
                    entry = FIELDS.get(parameter["name"])
                    if entry is not None and entry.description:
                        parameter["description"] = entry.description
