"""Every operation's summary and description (and hand-written examples), keyed
``"METHOD /path"`` as the document spells the path. See the package docstring for
how to add a route; ``tests/api/test_openapi_document.py`` names any operation missing
here."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

P = "/api/v1/public"
A = "/api/v1/admin"
# Every CSV download (``kit/csvcells.py``).
SAFE_CELLS = (
    "A cell that starts like a spreadsheet formula (`=`, `+`, `-`, `@`, a tab, …; "
    "not a plain number such as `-12.50`) is written with a leading `'`; the import "
    "drops it again."
)


@dataclass(frozen=True)
class Op:
    summary: str
    description: str
    request: Any = None
    response: Any = None


def op(summary: str, description: str, *, request: Any = None, response: Any = None) -> Op:
    return Op(summary, description, request, response)


INTRODUCTION = """\
tillbook: multi-branch retail point of sale, inventory and double-entry books.

**Public API** (`/api/v1/public`): tills, storefronts and payment integrations.
Every request sends the key pair (`X-Service-Public-Key`, `X-Service-Secret-Key`);
the key is bound to one warehouse and company, and everything it reads or writes is
that warehouse's. Requests may be signed (`X-Service-Timestamp`,
`X-Service-Signature`, see the `Signature` security scheme); keys created with
`--require-signature` must sign.

**Back office** (`/api/v1/admin`): staff log in (`POST /api/v1/admin/login`) and
send `Authorization: Bearer <token>`; each route names the permission it needs.

**Forms.** Money in orders, payments and balances is a decimal string with two
places (`"12.50"`); product prices, stock and line quantities are JSON numbers;
request bodies accept money and quantities as numbers or decimal strings.
Quantities are in the product's base unit unless a line names `selected_unit_id`.
Successful bodies carry `"status": "success"`; errors
`{"status": "error", "message": …}` and, on a 422, `errors` naming each field.

**Writes** are atomic and post a balanced journal entry. Send an
`Idempotency-Key` (or body `unique_id`) on every POST: a retry with the same key
and body within 24 h replays the first answer (`Idempotent-Replayed: true`)
without recording twice. On 429 and 503 wait `Retry-After` seconds; without it
back off with full jitter, `random(0, min(cap, base × 2^attempt))`. The Python
client `tillbook-client` (in the repository, `clients/python`) does all of this.

**Webhooks**: see the `webhooks` section for every event payload and the
delivery headers."""

_SALE_REQUEST = {
    "user_id": 2,
    "order_date": "2026-11-20",
    "invoice_number": "T1-000042",
    "product_items": [
        {"xid": "xIgUnTvy", "quantity": 2, "unit_price": "0.90"},
        {"xid": 3, "quantity": 1, "unit_price": 10.0, "selected_unit_id": "RfkfWDpa"},
    ],
    "discount": "0.00",
    "all_payments": [
        {"amount": "5.00", "payment_mode_id": "cash"},
        {"amount": "6.80", "payment_mode_id": "card", "reference": "TERM-8841"},
    ],
    "notes": "till 1",
}
_SALE_RESPONSE = {
    "status": "success",
    "order_id": 42,
    "invoice_number": "T1-000042",
    "total_amount": 11.8,
    "unique_id": "0b160ff170d64d32812c0ceb507774b6",
    "payment_status": "paid",
    "paid_amount": "11.80",
    "due_amount": "0.00",
}
_PAYMENT_REQUEST = {
    "user_id": 2,
    "payment_type": "in",
    "amount": "1.80",
    "payment_mode_id": "cash",
    "date": "2026-11-22",
    "reference": "RCPT-118",
    "invoices": [{"order_id": "SAL-00001", "amount": "1.80"}],
}
_PAYMENT_RESPONSE = {
    "status": "success",
    "payment_id": 1,
    "payment_type": "in",
    "user_id": 2,
    "amount": "1.80",
    "unallocated_amount": "0.00",
    "payment_mode_id": 1,
    "date": "2026-11-22",
    "reference": "RCPT-118",
    "notes": "",
    "journal_entry_id": 46,
    "allocations": [
        {
            "order_id": 1,
            "invoice_number": "SAL-00001",
            "amount": "1.80",
            "due_amount": "0.00",
            "payment_status": "paid",
        }
    ],
}

_LIST = (
    "Paged (`page`, `limit` up to 100); the answer is `data` = the pagination envelope "
    "(`current_page`, `per_page`, `total`, `last_page`, `data`)."
)
_KEYED = "The key's warehouse only."
_IDEMPOTENT = (
    "Idempotent: send `Idempotency-Key` (or body `unique_id`); a retry with the same "
    "token and body within 24 h replays the first answer and records nothing more."
)

OPERATIONS: dict[str, Op] = {
    "GET /health": op(
        "Liveness",
        'Answers `{"status": "success"}` while the process runs; no key needed.',
        response={"status": "success"},
    ),
    "GET /ready": op(
        "Readiness",
        'Answers `{"status": "success"}` once the database answers `SELECT 1` '
        "within 5 seconds, else 503 with `Retry-After`; no key needed.",
        response={"status": "success"},
    ),
    # --- public: catalog and reference ---------------------------------------------
    f"GET {P}/warehouses": op(
        "The key's warehouse",
        "A list holding the one warehouse the key is bound to.",
    ),
    f"GET {P}/products": op(
        "List products",
        "The products listed in the key's warehouse, with this warehouse's prices (JSON "
        "numbers) and stock (base units). `search` matches name, item code or barcode; "
        "`category_id` and `brand_id` take an id or xid. Archived products and listings "
        "no longer sold are left out. " + _LIST,
    ),
    f"GET {P}/products/{{ref}}": op(
        "One product",
        "One product by id, xid, item code or barcode, with its additional units and the "
        "FIFO batches still holding stock in the key's warehouse. A product not listed "
        "there is a 404.",
    ),
    f"GET {P}/categories": op(
        "Category tree",
        "The company's categories as a tree (roots with nested `children`); not paged.",
    ),
    f"GET {P}/categories/{{ref}}": op(
        "One category", "One category by id or xid, with its children."
    ),
    f"GET {P}/brands": op("List brands", "The company's brands; not paged."),
    f"GET {P}/brands/{{ref}}": op("One brand", "One brand by id or xid."),
    f"GET {P}/customers": op(
        "List customers",
        "The company's active customers; `balance` is what each owes in the key's "
        "warehouse. `search` matches name, phone, email or code. " + _LIST,
    ),
    f"POST {P}/customers": op(
        "Create a customer",
        "Signs up a customer at the till (name and contact details; no credit limit or "
        "opening balance from a till). " + _IDEMPOTENT,
    ),
    f"GET {P}/suppliers": op(
        "List suppliers",
        "The company's active suppliers; `balance` is what the company owes each in the "
        "key's warehouse. " + _LIST,
    ),
    f"GET {P}/payment-modes": op(
        "Payment modes",
        "The company's payment modes (`cash`, `card`…) and the ledger account each posts "
        "to; use the id, xid or code as `payment_mode_id`.",
    ),
    f"GET {P}/taxes": op("Taxes", "The company's tax rules (rate in percent, inclusive or not)."),
    f"GET {P}/units": op("Units", "The company's units of measure."),
    f"GET {P}/expense-categories": op(
        "Expense categories", "The company's expense categories and their ledger accounts."
    ),
    # --- public: orders ------------------------------------------------------------
    f"POST {P}/sales": op(
        "Record a sale",
        "Records a sale in the key's warehouse: prices the lines (line discount, tax, "
        "order discount, shipping), takes the stock by FIFO, takes the tenders in "
        "`all_payments` (split tender allowed; none means on credit, within the "
        "customer's credit limit), issues the invoice number (or keeps the client's "
        "`invoice_number`) and posts one balanced journal entry. Emits `order.created`, "
        "`sales.created` and, when paid in full, `order.paid`. A second request with the "
        "same `invoice_number` or token returns the first sale (an offline till's "
        "deterministic numbers make its retries safe). " + _IDEMPOTENT + " A date in a "
        "closed period is a 422 on `order_date`.",
        request=_SALE_REQUEST,
        response=_SALE_RESPONSE,
    ),
    f"GET {P}/sales": op(
        "List sales",
        "The warehouse's sales, newest first; `dates` filters by order date. " + _LIST,
    ),
    f"GET {P}/sales/{{order_id}}": op(
        "One sale",
        "One sale by id, xid or invoice number, with its lines and payments. " + _KEYED,
    ),
    f"POST {P}/purchases": op(
        "Record a purchase",
        "Receives stock from a supplier: adds a FIFO batch per line at its unit cost, "
        "posts Dr 11700 Inventory / Cr 21100 Payables and, with `all_payments`, the "
        "payments out. Emits `purchase.created`. " + _IDEMPOTENT,
    ),
    f"GET {P}/purchases": op("List purchases", "The warehouse's purchases, newest first. " + _LIST),
    f"GET {P}/purchases/{{order_id}}": op(
        "One purchase", "One purchase by id, xid or invoice number. " + _KEYED
    ),
    f"POST {P}/sales-returns": op(
        "Record a sales return",
        "Takes goods back from a customer: with `invoice_number` (the original sale) each "
        "unit is refunded at what that sale charged, never more; stock returns at its "
        "original cost; the refund goes to the tenders in `all_payments` or is credited "
        "to the customer. Emits `return.created`. " + _IDEMPOTENT,
    ),
    f"GET {P}/sales-returns": op("List sales returns", "The warehouse's sales returns. " + _LIST),
    f"GET {P}/sales-returns/{{order_id}}": op(
        "One sales return", "One sales return by id, xid or invoice number. " + _KEYED
    ),
    f"POST {P}/purchase-returns": op(
        "Record a purchase return",
        "Sends goods back to a supplier: stock leaves at its FIFO cost, the supplier's "
        "payable falls. Emits `return.created`. " + _IDEMPOTENT,
    ),
    f"GET {P}/purchase-returns": op(
        "List purchase returns", "The warehouse's purchase returns. " + _LIST
    ),
    f"GET {P}/purchase-returns/{{order_id}}": op(
        "One purchase return", "One purchase return by id, xid or invoice number. " + _KEYED
    ),
    # --- public: stock, prices, payments, expenses -------------------------------------
    f"POST {P}/stock-adjustments": op(
        "Adjust stock",
        "Adds or removes base units of a product (a count, breakage, a found box): "
        "`add` posts Dr 11700 / Cr 51100, `subtract` the reverse, at cost. Emits "
        "`stock.adjusted`. " + _IDEMPOTENT,
    ),
    f"GET {P}/stock-adjustments": op(
        "List stock adjustments", "The warehouse's stock adjustments, newest first. " + _LIST
    ),
    f"POST {P}/price-adjustments": op(
        "Change a price",
        "Sets a product's sales price in the key's warehouse, keeping the old price in an "
        "immutable history batch. Emits `product.updated`. " + _IDEMPOTENT,
    ),
    f"GET {P}/price-adjustments": op(
        "List price changes", "The warehouse's price adjustment batches. " + _LIST
    ),
    f"POST {P}/payments": op(
        "Record a payment",
        "Money in from a customer (`in`) or out to a supplier (`out`), optionally "
        "allocated to open invoices (`invoices[]`, by id, xid or invoice number; each "
        "invoice's due falls by its amount; the rest stays on account). Emits "
        "`payment.created` and an `order.paid` per invoice it settles. " + _IDEMPOTENT,
        request=_PAYMENT_REQUEST,
        response=_PAYMENT_RESPONSE,
    ),
    f"POST {P}/gift-cards": op(
        "Sell or load a gift card",
        "A new card (no `code`; default: never expires, or `expires_on`) or more on an "
        "existing one (`code`). The tenders pay the whole `amount`: Dr their accounts, "
        "Cr 21300 Gift Cards and Store Credit, no tax (tax is charged when the card is "
        "spent). Each tender is a payment in from `user_id` (default: the walk-in "
        "customer), counted in the till's shift. A new card's code (16 characters, "
        "`XXXX-XXXX-XXXX-XXXX`) is in this first answer only (`code_in_full` true): print "
        "it on the receipt; the server keeps only a keyed hash and the last four, and a "
        "replay answers the code masked. Spend it on `POST /sales` as a tender with "
        "`payment_mode_id` `gift-card` and `gift_card_code`. A wrong code counts against "
        "the key's gift card limit (429 when used up). " + _IDEMPOTENT,
        request={
            "amount": "25.00",
            "all_payments": [{"amount": "25.00", "payment_mode_id": "cash"}],
        },
        response={
            "status": "success",
            "data": {
                "id": 7,
                "kind": "card",
                "code": "K7QX-M2ZD-4PAE-R6TB",
                "code_in_full": True,
                "balance": "25.00",
                "status": "active",
                "expires_on": None,
                "customer_id": None,
                "customer_name": None,
                "warehouse_id": 1,
                "created_at": "2026-11-26T10:00:00+00:00",
                "amount": "25.00",
                "journal_entry_id": 88,
            },
        },
    ),
    f"GET {P}/customers/{{customer_id}}/loyalty": op(
        "A customer's loyalty points",
        "The customer's points and what they are worth at today's point value, for a till "
        "that has picked the customer (the register shows them while online). `enrolled` "
        "is false for the walk-in customer and before the company sets up a programme. "
        "Redeem points with a tender in the `loyalty` payment mode on `POST /sales`. "
        "Another company's customer is a 404.",
    ),
    f"POST {P}/gift-cards/balance": op(
        "A gift card's balance",
        "What the card with this `code` holds, sent in the body so that the code is in no "
        "URL or log. An unknown code, an expired card and a spent one are the same 422 "
        "naming `code`. Rate-limited per key (wrong codes) and per card (every lookup): "
        "429 with `Retry-After`. Writes nothing.",
        request={"code": "K7QX-M2ZD-4PAE-R6TB"},
        response={
            "status": "success",
            "data": {
                "code": "****-****-****-R6TB",
                "balance": "12.40",
                "expires_on": "2027-12-31",
                "usable": True,
            },
        },
    ),
    f"GET {P}/payments/user-invoices": op(
        "A party's open invoices",
        "The customer's or supplier's invoices with a due balance in the key's warehouse, "
        "and their balance there. `user_id`: the party's id or xid.",
    ),
    f"POST {P}/expenses": op(
        "Record an expense",
        "An expense against its category's ledger account: paid now (a "
        "`payment_mode_id`: Cr cash) or pending (Cr 21100 payables, optionally owed to "
        "`user_id`, a supplier). " + _IDEMPOTENT,
    ),
    f"GET {P}/expenses": op("List expenses", "The warehouse's expenses. " + _LIST),
    f"POST {P}/terminal-callbacks/{{provider}}": op(
        "Terminal payment callback",
        "Called by a card terminal or payment provider (not by a till): confirms or "
        "fails a payment for a sale. Authenticated by the provider's own signature "
        "(`X-Service-Signature` of the raw body with the provider's secret), not the key "
        "pair. A confirmed callback records the payment and may emit `order.paid`; the "
        "same `reference` again is answered with `duplicate: true`.",
    ),
    # --- admin: session, webhooks, reports, periods, audit, staff ---------------------
    f"POST {A}/login": op(
        "Log in",
        "Email and password of a staff member; answers a bearer token for "
        "`Authorization: Bearer …`. Failed logins are rate-limited per address and email "
        "(429 with `Retry-After`).",
    ),
    f"POST {A}/logout": op("Log out", "Ends the session of the bearer token."),
    f"GET {A}/webhooks": op(
        "List webhooks", "The company's webhooks (never their secrets). `webhooks.manage`."
    ),
    f"POST {A}/webhooks": op(
        "Register a webhook",
        "An https URL the address policy accepts, for the listed event types (or all); "
        "answers the signing secret once. `webhooks.manage`.",
    ),
    f"GET {A}/webhooks/deliveries": op(
        "List deliveries",
        "Deliveries newest first, filtered by `status` and `webhook_id`. `webhooks.manage`.",
    ),
    f"GET {A}/webhooks/deliveries/{{delivery_id}}/attempts": op(
        "A delivery's attempts", "Every attempt of one delivery: status, latency, error."
    ),
    f"POST {A}/webhooks/deliveries/{{delivery_id}}/redeliver": op(
        "Redeliver", "Queues a delivery again now, whatever its state."
    ),
    f"POST {A}/webhooks/{{webhook_id}}/disable": op(
        "Disable a webhook", "No deliveries until enabled; new events are not queued for it."
    ),
    f"POST {A}/webhooks/{{webhook_id}}/enable": op(
        "Enable a webhook", "Deliveries resume, queued ones included."
    ),
    f"POST {A}/webhooks/{{webhook_id}}/rotate-secret": op(
        "Rotate a webhook's secret",
        "A new secret, answered once; every later send (retries too) is signed with it.",
    ),
    f"DELETE {A}/webhooks/{{webhook_id}}": op(
        "Remove a webhook", "Deletes the webhook, its deliveries and their attempt log."
    ),
    f"GET {A}/reports/trial-balance": op(
        "Trial balance",
        "Σ debit, Σ credit and balance per posting account over `from`–`to` (and "
        "`warehouse_id`). `books.read`.",
    ),
    f"GET {A}/reports/promotions": op(
        "Promotion report",
        "Each promotion's sales, units (and units returned), discount on the price as given "
        "and cost to revenue net of tax (its share of 41300) over the sales dated `from` to "
        "`to`, voided sales left out; `warehouse_id` for one branch. `books.read`.",
    ),
    f"POST {A}/promotions/{{record_id}}/pause": op(
        "Pause a promotion",
        "From now on it prices no sale (sales rung up before keep it); `If-Match` or body "
        "`version`; 409 when already paused or archived. `prices.write`.",
    ),
    f"POST {A}/promotions/{{record_id}}/resume": op(
        "Resume a promotion",
        "From now on it prices sales again on its dates, weekdays and hours; `If-Match` or "
        "body `version`. `prices.write`.",
    ),
    f"GET {P}/promotions": op(
        "Promotions",
        "The branch's promotions (its own and the company-wide ones) as the engine reads "
        "them, so a register prices a basket exactly as `POST /sales` will; with "
        "`updated_since` or `cursor`, their change feed (archived ones as tombstones).",
    ),
    f"GET {A}/reports/stock-valuation": op(
        "Stock valuation",
        "FIFO layers on hand per product against the 11700 Inventory balance. `books.read`.",
    ),
    f"GET {A}/reports/ledger": op(
        "An account's ledger",
        "One account's lines, a page at a time with running balance; `cursor` continues, "
        "`format=csv` streams the whole range. `books.read`.",
    ),
    f"GET {A}/reports/statement": op(
        "A party's statement",
        "A customer's (11500) or supplier's (21100) lines with running balance. `books.read`.",
    ),
    f"GET {A}/reports/profit-loss": op(
        "Profit and loss", "Income and expenses over the period, and net profit. `books.read`."
    ),
    f"GET {A}/reports/balance-sheet": op(
        "Balance sheet", "Assets, liabilities and equity as of `to`. `books.read`."
    ),
    f"GET {A}/reports/check-rollups": op(
        "Check roll-ups",
        "Recomputes every closed month's roll-up from the journal lines and reports "
        "differences. `books.read`.",
    ),
    f"GET {A}/periods": op("Closed periods", "The day the books are closed through, if any."),
    f"POST {A}/periods/close": op(
        "Close the books",
        "Nothing can be dated on or before `through` afterwards; passing 31 December posts "
        "the year-end closing entry. `books.close`.",
    ),
    f"POST {A}/periods/reopen": op(
        "Reopen the books", "Moves the closed day back (or removes it, `null`). `books.reopen`."
    ),
    # --- admin: currencies and exchange rates (DESIGN §16) ---------------------------------
    f"GET {A}/currencies": op(
        "Currencies",
        "The company's base currency (the books are kept in it) and every foreign "
        "currency it has enabled (or enabled and since disabled), with its minor units "
        "and its newest rate (base units per one unit of it). `books.read`.",
    ),
    f"POST {A}/currencies": op(
        "Enable a currency",
        "An ISO 4217 code; documents may then be in it (once it has a rate). The base "
        "currency or an unknown code is a 422 naming `currency`. Enabling one already "
        "enabled changes nothing. `settings.write`.",
        request={"currency": "EUR"},
    ),
    f"POST {A}/currencies/{{code}}/disable": op(
        "Disable a currency",
        "New documents in it are refused; its rates and the documents already in it stay "
        "readable. A currency never enabled is a 404. `settings.write`.",
    ),
    f"GET {A}/exchange-rates": op(
        "Exchange rates",
        "Newest date first, of every currency or the one named; of each date the rate in "
        "force (the newest entered), or with `corrections` every entry, the replaced ones "
        "marked `superseded`. `books.read`.",
    ),
    f"POST {A}/exchange-rates": op(
        "Set an exchange rate",
        "Base units per one unit of `currency` from `date` on. A second rate for the same "
        "date is a correction: the earlier entry is kept, and documents posted from now "
        "on take the new one; entries already posted keep the rate on their lines. A rate "
        "of 0 or less, of more than 8 decimal places or beyond 9999999999.99999999 is a "
        "422 naming `rate`; a currency not enabled one naming `currency`. "
        "`settings.write`.",
        request={"currency": "EUR", "date": "2026-11-20", "rate": "1.085"},
    ),
    f"POST {A}/exchange-rates/import": op(
        "Import exchange rates (CSV)",
        "Multipart upload, field `file`: a header line `date,currency,rate`, then one rate "
        "a line (a date that has one is a correction). Every row is checked first; a file "
        "with any bad row, or a currency not enabled, imports nothing (422 naming "
        "`rows.N.field`). `settings.write`.",
    ),
    # --- admin: money in and out ----------------------------------------------------------
    f"POST {A}/payments": op(
        "Record a payment",
        "A customer's payment (`in`) or a payment to a supplier (`out`) in one branch "
        "(`warehouse_id`), allocated to the invoices named; the rest stays on the party's "
        "account. The same checks and postings as the public `POST /payments`. "
        "`payments.receive` (a cashier too) or `payments.make` there.",
    ),
    f"GET {A}/gift-cards": op(
        "Gift cards and store credit",
        "The company's gift cards (`kind` card, code masked to its last four) and "
        "customers' store-credit balances (`kind` credit), newest first, with balance, "
        "status, expiry and customer; `customer_id` narrows to one customer. Σ balances "
        "is what 21300 owes. `books.read`. " + _LIST,
    ),
    f"GET {A}/gift-cards/{{card_id}}": op(
        "A gift card's statement",
        "One card or store-credit balance with its movements, oldest first: `issue`, "
        "`load`, `spend`, `refund`, `void` (a voided sale gives it back), `expire` (the "
        "rest to 41500 Breakage Income); each with the balance after it, its order and "
        "journal entry. Another company's card is a 404. `books.read`.",
    ),
    f"POST {A}/gift-cards": op(
        "Sell a gift card",
        "As the public `POST /gift-cards`, recorded in one branch (`warehouse_id`) and in "
        "the audit trail (with the code masked). The code is in the first answer only. "
        "`payments.receive` there (a cashier too).",
    ),
    f"GET {A}/loyalty": op(
        "The loyalty programme",
        "The company's loyalty programme (DESIGN §18): `earn_unit` (the base amount that "
        "earns one point), `point_value` (what a point is worth), `active` (whether sales "
        "earn), its `version` (also the `ETag`) and what the outstanding points owe on "
        "21400 (`outstanding_points`, `outstanding_value`). `configured` is false before "
        "it is set up. Every named customer takes part; the walk-in customer never does. "
        "`books.read`.",
    ),
    f"PUT {A}/loyalty": op(
        "Set the loyalty programme",
        "Sets up or changes the programme. A change names the version it is based on "
        "(`If-Match` or `version`: 412 when stale, 428 when missing). A new `point_value` "
        "revalues every outstanding point in the same transaction: Σ points × (new − old) "
        "between 21400 Loyalty Points and 41300 Sales Discounts (`revaluation_entry_id`), "
        "with a `revalue` movement on each customer's points. Audited as "
        "`loyalty.updated`. `settings.write` (the owner).",
    ),
    f"GET {A}/customers/{{customer_id}}/loyalty": op(
        "A customer's loyalty points",
        "The customer's points, their value at today's point value and their movements, "
        "newest first: `earn` (a sale), `redeem` (a tender in the `loyalty` mode), "
        "`return` (a return takes back its sale's share), `refund` (a return refunded in "
        "points), `void` and `revalue`; each with the points after it, the value 21400 "
        "moved, its order and journal entry. A balance may be below zero when a return "
        "took back points already spent. Another company's customer is a 404. "
        "`parties.read`. " + _LIST,
    ),
    f"POST {A}/expenses": op(
        "Record an expense",
        "Paid now (with `payment_mode_id`: Dr the category's account, Cr the mode's) or "
        "pending approval (Cr 21100). `expenses.write` in that branch.",
    ),
    f"POST {A}/expenses/{{expense_id}}/pay": op(
        "Approve and pay a pending expense",
        "Dr 21100, Cr the mode's account; the expense moves from `pending` to `paid` and "
        "names the entry. Paid once only: a second approval is a 409. `expenses.approve` "
        "in the expense's branch.",
    ),
    f"POST {A}/money-moves": op(
        "Move money between cash and bank",
        "From one payment mode's account to another's (takings paid into the bank: "
        "`cash` to `bank`), posted Dr the receiving account / Cr the sending one in the "
        "branch. `money.move` there.",
    ),
    f"GET {A}/money-moves": op(
        "Money moves", "The moves recorded, newest first, in a branch or all. `books.read`."
    ),
    f"GET {A}/audit": op(
        "Audit trail",
        "Every set-up change newest first: who, what, before and after. `audit.read`.",
    ),
    f"GET {A}/staff": op("List staff", "The company's staff members. `staff.manage`."),
    f"POST {A}/staff": op(
        "Add a staff member",
        "A login with a role and, except owners, an optional warehouse scope. `staff.manage`.",
    ),
    f"GET {A}/staff/{{staff_id}}": op("One staff member", "With `ETag`. `staff.manage`."),
    f"PATCH {A}/staff/{{staff_id}}": op(
        "Edit a staff member",
        "Any of name, email, role, password, warehouse scope; needs `If-Match` or "
        "`version`. The last active owner cannot be demoted. `staff.manage`.",
    ),
    f"POST {A}/staff/{{staff_id}}/archive": op(
        "Archive a staff member",
        "No login from now on; their sessions and the keys acting as them end. `staff.manage`.",
    ),
    # --- admin: products ---------------------------------------------------------------
    f"GET {A}/products": op(
        "List products",
        "The company's catalog with every listing; `warehouse_id` keeps the products "
        "listed there, `search` matches name, item code or barcode. `catalog.read`.",
    ),
    f"POST {A}/products": op(
        "Create a product",
        "A company-wide product, optionally listed in warehouses with prices and opening "
        "stock (posted Dr 11700 / Cr 31100). `catalog.write` (and `prices.write`, "
        "`stock.write` in those warehouses).",
    ),
    f"GET {A}/products/{{product_id}}": op("One product", "With every listing and `ETag`."),
    f"PATCH {A}/products/{{product_id}}": op(
        "Edit a product",
        "Company-wide fields (name, codes, barcodes, category, brand, unit, tax, units); "
        "needs `If-Match` or `version`. Emits `product.updated`. `catalog.write`.",
    ),
    f"POST {A}/products/{{product_id}}/archive": op(
        "Archive a product",
        "No longer sold or bought anywhere; stays readable and returnable. `catalog.write`.",
    ),
    f"POST {A}/products/{{product_id}}/listings": op(
        "List a product in a warehouse",
        "Prices, reorder level and optional opening stock in one more warehouse. "
        "`catalog.write` there.",
    ),
    f"PATCH {A}/products/{{product_id}}/listings/{{warehouse_id}}": op(
        "Edit a listing",
        "Prices (a price change keeps its history), reorder level, active; needs "
        "`If-Match` or `version`. `catalog.write`/`prices.write` there.",
    ),
    f"POST {A}/products/{{product_id}}/listings/{{warehouse_id}}/opening-stock": op(
        "Add opening stock",
        "A batch at its cost, posted Dr 11700 / Cr 31100. `stock.write` there.",
    ),
    f"GET {A}/stock-counts": op(
        "List stocktakes",
        "The stocktakes of the branches the staff member counts (`warehouse_id` for "
        "one; `status` draft, posted or cancelled), newest first. `stock.write`.",
    ),
    f"POST {A}/stock-counts": op(
        "Start a stocktake",
        "A draft count sheet for one branch: every product listed there (`scope` "
        "`all`), one category (`category`, `category_id`) or a list (`list`, "
        "`product_ids` and/or `item_codes`). Nothing moves until it is posted. "
        "`stock.write` there.",
    ),
    f"GET {A}/stock-counts/{{count_id}}": op(
        "A stocktake",
        "The sheet: per product what was counted, the book stock when the count was "
        "entered (`expected`), the difference and its cost (as posting would book it "
        "while a draft; as booked once posted), the stock now and after posting.",
    ),
    f"POST {A}/stock-counts/{{count_id}}/entries": op(
        "Enter counted quantities",
        "`items`: counted quantities (null clears one); `barcode`: a scan, one more of "
        "the product with that barcode or item code (its line added when the branch "
        "lists it). A quantity entered takes the book stock of that moment as what it "
        "is measured against. Only a draft; every entry checked before any is saved.",
    ),
    f"POST {A}/stock-counts/{{count_id}}/post": op(
        "Post a stocktake",
        "Each counted difference becomes a stock adjustment (a gain at the purchase "
        "price, Dr 11700 / Cr 51100; a loss at FIFO cost, Dr 51100 / Cr 11700), all in "
        "one transaction; a line that cannot be adjusted (stock short) refuses the "
        "whole count with a 422 naming it. A second post is a 409.",
    ),
    f"POST {A}/stock-counts/{{count_id}}/cancel": op(
        "Cancel a stocktake", "A draft dropped; nothing moves. `stock.write` there."
    ),
    f"GET {A}/purchase-orders": op(
        "List purchase orders",
        "The purchase orders of the branches the staff member reads (`warehouse_id` for "
        "one, `supplier_id` for one supplier, `status` a state or `open`: goods still to "
        "come), newest first. `books.read`.",
    ),
    f"POST {A}/purchase-orders": op(
        "Create a purchase order",
        "A draft order to a supplier for one branch, lines in base units at the "
        "expected cost. Nothing is posted and no stock moves until goods are received "
        "(DESIGN.md §5). `purchases.write` there.",
    ),
    f"GET {A}/purchase-orders/{{po_id}}": op(
        "A purchase order",
        "The order with each line's ordered, received and remaining quantity, and the "
        "deliveries (purchases) received against it.",
    ),
    f"PUT {A}/purchase-orders/{{po_id}}": op(
        "Edit a draft purchase order",
        "The whole draft again (supplier, dates, lines); an order already sent is a "
        "409. `purchases.write` there.",
    ),
    f"POST {A}/purchase-orders/{{po_id}}/order": op(
        "Mark a purchase order as ordered",
        "The draft is sent to the supplier: it can no longer be edited, and deliveries "
        "can be received against it. `purchases.write` there.",
    ),
    f"POST {A}/purchase-orders/{{po_id}}/receipts": op(
        "Receive a delivery against a purchase order",
        "A purchase (as `POST /purchases`: FIFO batches with batch number and expiry, "
        "Dr 11700 the cost net of each line's `tax_id` tax, Dr 11800 the tax, Cr 21100 "
        "the gross, tenders paid now) of the lines that came; more than is "
        "still to come is a 422 naming the line. The order becomes partially received "
        "or received. `purchases.write` there (paying now: `payments.make` too).",
    ),
    f"POST {A}/purchase-orders/{{po_id}}/close": op(
        "Close a purchase order",
        "What has not come is not coming: `closed` (or `cancelled` when nothing came). "
        "Nothing is posted. `purchases.write` there.",
    ),
    f"POST {A}/price-changes/preview": op(
        "Preview a batch price change",
        "Old -> new sales and purchase price of every listing the change covers "
        "(products by `search`, `category_id` or `item_codes`, in `warehouse_ids`; "
        "`method` `set`, `amount` or `percent`, rounded to `step`), each row's problem "
        "if any (below zero, above the MRP) and the `fingerprint` to apply it with. "
        "Writes nothing. `prices.write` for every branch named.",
    ),
    f"POST {A}/price-changes": op(
        "Apply a batch price change",
        "The change previewed, with the preview's `fingerprint`: every listing repriced "
        "in one transaction (each as a single price edit: its history, audit record "
        "and `product.updated` event), one numbered price adjustment per branch for the "
        "sales prices, and the change audited once per branch. Refused whole (422) "
        "when a row has a problem or a price moved since the preview (`preview`). "
        "`prices.write` for every branch named; idempotent on `Idempotency-Key`.",
    ),
    f"GET {A}/price-changes": op(
        "Price change history",
        "The batch price changes applied, newest first, each with who, when, the rule "
        "and every old -> new: one branch's (`warehouse_id`; a scoped staff member "
        "always sees their own) or every branch's. `prices.write`.",
    ),
    f"POST {A}/import/products": op(
        "Import products (CSV)",
        "Multipart upload, field `file`: every row checked first; a file with any bad "
        "row changes nothing (422 with every bad row). `catalog.write`.",
    ),
    f"GET {A}/export/products": op(
        "Export products (CSV)",
        "Every listing as CSV, re-importable. " + SAFE_CELLS + " `catalog.read`.",
    ),
}


def _parties() -> dict[str, Op]:
    out: dict[str, Op] = {}
    for segment, noun, perm in (
        ("customers", "customer", "parties.write"),
        ("suppliers", "supplier", "suppliers.write"),
    ):
        out[f"GET {A}/{segment}"] = op(
            f"List {segment}",
            f"The company's {segment}; `search`, `include_archived`. `parties.read`.",
        )
        out[f"POST {A}/{segment}"] = op(
            f"Create a {noun}",
            f"A {noun} with contact details; a credit limit or opening balance needs "
            f"`parties.credit` too. `{perm}`.",
        )
        out[f"GET {A}/{segment}/{{party_id}}"] = op(
            f"One {noun}", "With its company-wide balance and `ETag`. `parties.read`."
        )
        out[f"PATCH {A}/{segment}/{{party_id}}"] = op(
            f"Edit a {noun}", f"Needs `If-Match` or `version`. `{perm}`."
        )
        out[f"POST {A}/{segment}/{{party_id}}/archive"] = op(
            f"Archive a {noun}",
            f"Kept for history, refused on new documents; not with an unsettled balance. `{perm}`.",
        )
        out[f"POST {A}/import/{segment}"] = op(
            f"Import {segment} (CSV)",
            "Multipart upload, field `file`; all rows or none. `parties.credit`.",
        )
        out[f"GET {A}/export/{segment}"] = op(
            f"Export {segment} (CSV)", "Every party with a code, re-importable. " + SAFE_CELLS
        )
    return out


def _editable() -> dict[str, Op]:
    out: dict[str, Op] = {}
    for prefix, noun, perm in (
        ("units", "unit", "catalog.write"),
        ("categories", "category", "catalog.write"),
        ("brands", "brand", "catalog.write"),
        ("taxes", "tax", "settings.write"),
        ("payment-modes", "payment mode", "settings.write"),
        ("expense-categories", "expense category", "settings.write"),
        ("warehouses", "warehouse", "settings.write"),
        ("promotions", "promotion", "prices.write"),
    ):
        out[f"GET {A}/{prefix}"] = op(
            f"List {prefix.replace('-', ' ')}",
            f"The company's {prefix.replace('-', ' ')}, paged; `include_archived`. `catalog.read`.",
        )
        out[f"POST {A}/{prefix}"] = op(
            f"Create a {noun}", f"Answers 201 with the {noun} and its `ETag`. `{perm}`."
        )
        out[f"GET {A}/{prefix}/{{record_id}}"] = op(
            f"One {noun}", f"The {noun} with its `version` as `ETag`. `catalog.read`."
        )
        out[f"PATCH {A}/{prefix}/{{record_id}}"] = op(
            f"Edit a {noun}",
            f"Only the fields sent change; needs `If-Match` or a body `version` (412 when "
            f"stale, 428 when missing). `{perm}`.",
        )
        out[f"POST {A}/{prefix}/{{record_id}}/archive"] = op(
            f"Archive a {noun}",
            f"Kept for history, not offered for new use; `If-Match` or body `version`. `{perm}`.",
        )
    return out


OPERATIONS.update(
    {
        f"POST {P}/sales/{{order_id}}/void": op(
            "Void a sale",
            "Cancels a mistaken sale of the key's warehouse: a reversing journal entry "
            "naming the original (corrections are reversing entries, never edits), the "
            "stock back into the very batches it left, at the cost it left with, each "
            "tender refunded to its payment mode, `order_status` `cancelled`, and an "
            "`order.cancelled` event. Refused (422) once the sale has a return or a "
            "payment after its creation; a second void is a 409. The voided sale stays "
            "readable and leaves the lists of open invoices. " + _IDEMPOTENT,
        ),
        f"POST {P}/shifts": op(
            "Open a shift",
            "Opens a till shift on a register with its opening float in the drawer's "
            "payment mode (default: the mode coded `cash`). One open shift per register "
            "(409 for a second). Sales, returns and payments made while it is open carry "
            "it; a warehouse with `require_shift` refuses sales without one. " + _IDEMPOTENT,
        ),
        f"GET {P}/shifts": op(
            "List shifts",
            "The warehouse's 50 latest shifts, open and closed, newest first: a plain array "
            "in `data` (not paged).",
        ),
        f"POST {P}/shifts/{{shift_id}}/cash": op(
            "Pay cash in or out of the drawer",
            "Cash out to an expense category (petty cash, posted as an expense) or to "
            "another payment mode's account (takings dropped at the bank); cash in from "
            "another payment mode's account (a float top-up). Each movement is posted and "
            "shows on the shift's X and Z reports. " + _IDEMPOTENT,
        ),
        f"POST {P}/shifts/{{shift_id}}/close": op(
            "Close a shift (Z report)",
            "Closes the shift with the amount counted per payment mode (the drawer's mode "
            "must be counted): the difference from what was expected is posted to 52500 "
            "Cash Over/Short, and the answer is the Z report (sales, returns, voids, tax "
            "by rate, tenders, cash movements, expected vs counted). A second close is a "
            "409. " + _IDEMPOTENT,
        ),
    }
)
OPERATIONS.update(
    {
        f"POST {P}/stock-transfers": op(
            "Send stock to another branch",
            "The sending branch's key dispatches `items` (base units) to `to_warehouse_id` "
            "(a warehouse of the same company): the stock leaves by FIFO at cost into "
            "11750 Goods in Transit (Dr 11750 / Cr 11700) and a `transfer.dispatched` event "
            "goes out. The answer's `transfer_status` is `dispatched`. Both branches' keys "
            "see the transfer; no other warehouse does. " + _IDEMPOTENT,
        ),
        f"GET {P}/stock-transfers": op(
            "List transfers",
            "Transfers sent from or to the key's warehouse, newest first (spec pagination "
            "envelope), each with its `direction` relative to this warehouse; `status` "
            "filters by state.",
        ),
        f"GET {P}/stock-transfers/{{ref}}": op(
            "One transfer",
            "A transfer the key's warehouse sent or receives, with its items, the batches "
            "each came from and what was received and written off.",
        ),
    }
)
OPERATIONS.update(_parties())
OPERATIONS.update(_editable())
OPERATIONS.update(
    {
        # --- the register (DESIGN.md §15): its own credential only ----------------------
        f"GET {P}/register": op(
            "The register itself",
            "For a register's credential only (any other key: 403): its name, prefix and "
            "branch, the branch's receipt texts, the highest invoice number of its prefix "
            "the server holds (a wiped device starts after it) and its open shift.",
        ),
        f"GET {P}/register/cashiers": op(
            "The register's cashiers",
            "Staff who may sell at this register (active, of this branch or of every "
            "branch, with a PIN), each with the PBKDF2-SHA256 parameters of their PIN "
            "(iterations, base64 salt and 32-byte hash) that the register checks offline. "
            "A register's credential only.",
        ),
        f"POST {P}/register/heartbeat": op(
            "Register heartbeat",
            "The register reports the writes it holds queued and the ones the server "
            'refused (its "needs attention" list), shown in the back office\'s Settings → '
            "Registers. The latest report replaces the one before. A register's credential "
            "only.",
        ),
        # --- admin: registers -----------------------------------------------------------
        f"GET {A}/registers/branches": op(
            "Branches to pair a register to",
            "Every active branch for an owner or an unscoped manager; a scoped manager's "
            "own. `registers.manage`.",
        ),
        f"GET {A}/registers": op(
            "List registers",
            "The company's registers (a scoped manager: their branch's) with when each was "
            "last seen, its writes queued and the writes refused it. `registers.manage`.",
        ),
        f"POST {A}/registers": op(
            "Pair a register",
            "A register for a branch, with its own API key (10000 requests a minute) and "
            "the next prefix of the company (`R1`, `R2`, …, never reused). The secret key is "
            "in this answer only: a replay of the same `Idempotency-Key` answers "
            "`secret_key` null. Audited. `registers.manage` for that branch.",
        ),
        f"POST {A}/registers/{{register_id}}/revoke": op(
            "Revoke a register",
            "Its key stops at once: the device's next request is a 401. A second revoke "
            "changes nothing. Audited. `registers.manage` for its branch.",
        ),
        f"PUT {A}/staff/{{staff_id}}/pin": op(
            "Set a staff member's register PIN",
            "4 to 8 digits (null removes it), stored as a salted PBKDF2 hash; never shown. "
            "`staff.manage`, or the staff member themselves.",
        ),
    }
)
