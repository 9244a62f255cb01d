"""Posting rules as data (DESIGN.md §5): which named amount goes to which account.

A rule is a tuple of legs. An operation hands ``post`` a dict of named amounts;
every leg turns one amount into one line (or one line per account for a
``by_account`` amount such as tenders). A negative amount flips the leg to the
other side (the purchase-return difference on 51200 can go either way).
Reading this file is enough to know how any operation hits the books.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from tillbook.ledger import chart as c

Side = Literal["debit", "credit"]


@dataclass(frozen=True)
class Leg:
    amount: str  # name of the amount in the operation's figures
    side: Side
    account: str | None  # fixed account code; None: the amount carries its accounts
    party: bool = False  # the line names the order's party (sub-ledger)


RuleName = Literal[
    "sale",
    "purchase",
    "payment_in",
    "payment_out",
    "stock_add",
    "stock_subtract",
    "expense_paid",
    "expense_pending",
    "expense_payment",
    "account_move",
    "sales_return",
    "purchase_return",
    "opening_stock",
    "deficit_settlement",
    "opening_balance_customer",
    "opening_balance_supplier",
    "year_end_close",
    "drawer_transfer",
    "cash_over_short",
    "transfer_dispatch",
    "transfer_receive",
    "transfer_cancel",
    "revaluation",
    "gift_card_sale",
    "gift_card_breakage",
    "loyalty_revaluation",
]

RULES: dict[RuleName, tuple[Leg, ...]] = {
    "sale": (
        Leg("due", "debit", c.RECEIVABLE, party=True),
        Leg("tenders", "debit", None),
        Leg("discount", "debit", c.SALES_DISCOUNTS),
        Leg("promotions", "debit", c.SALES_DISCOUNTS),
        Leg("cost", "debit", c.COGS),
        Leg("subtotal", "credit", c.SALES_REVENUE),
        Leg("tax", "credit", c.SALES_TAX),
        Leg("shipping", "credit", c.SHIPPING_INCOME),
        Leg("cost", "credit", c.INVENTORY),
        # Loyalty points the sale earns (DESIGN §18): their value is a discount
        # given now and owed in goods until the points are redeemed.
        Leg("points", "debit", c.SALES_DISCOUNTS),
        Leg("points", "credit", c.LOYALTY_POINTS),
    ),
    # A purchase: the goods go into stock at their cost net of tax, the tax charged
    # by the supplier is recoverable (11800), and the supplier is owed the gross.
    "purchase": (
        Leg("net", "debit", c.INVENTORY),
        Leg("tax", "debit", c.INPUT_TAX),
        Leg("total", "credit", c.PAYABLE, party=True),
        Leg("paid", "debit", c.PAYABLE, party=True),
        Leg("tenders", "credit", None),
    ),
    "payment_in": (
        Leg("tenders", "debit", None),
        Leg("amount", "credit", c.RECEIVABLE, party=True),
    ),
    "payment_out": (
        Leg("amount", "debit", c.PAYABLE, party=True),
        Leg("tenders", "credit", None),
    ),
    "stock_add": (
        Leg("cost", "debit", c.INVENTORY),
        Leg("cost", "credit", c.COGS),
    ),
    "stock_subtract": (
        Leg("cost", "debit", c.COGS),
        Leg("cost", "credit", c.INVENTORY),
    ),
    "expense_paid": (
        Leg("expense", "debit", None),
        Leg("tenders", "credit", None),
    ),
    "expense_pending": (
        Leg("expense", "debit", None),
        Leg("amount", "credit", c.PAYABLE),
    ),
    # A pending expense approved and paid: what it left owing in 21100 (with no
    # party, as ``expense_pending`` put it there) is paid from the mode's account.
    "expense_payment": (
        Leg("amount", "debit", c.PAYABLE),
        Leg("tenders", "credit", None),
    ),
    # Money moved between two of the company's cash and bank accounts (takings paid
    # into the bank, cash drawn from it): ``to`` and ``from`` are (account, amount)
    # pairs of the same amount; nothing is earned or spent.
    "account_move": (
        Leg("to", "debit", None),
        Leg("from", "credit", None),
    ),
    # A sales return gives back the tax of the returned units: "value" is the refund
    # net of tax (and of the sale's order-discount share), "tax" goes back to 21200,
    # the gross refund is credited to the customer or paid by the refund tenders.
    # The units come back into stock at their original cost.
    "sales_return": (
        Leg("value", "debit", c.SALES_RETURNS),
        Leg("tax", "debit", c.SALES_TAX),
        Leg("credit_due", "credit", c.RECEIVABLE, party=True),
        Leg("tenders", "credit", None),
        Leg("cost", "debit", c.INVENTORY),
        Leg("cost", "credit", c.COGS),
        # The points the sale earned, taken back pro rata at their current value.
        Leg("points", "debit", c.LOYALTY_POINTS),
        Leg("points", "credit", c.SALES_DISCOUNTS),
    ),
    # Goods sent back to a supplier: the supplier owes back the agreed credit with
    # its tax (the gross, off what we owe them), the units leave stock at their FIFO
    # cost, the tax of the returned units is no longer recoverable, and what the net
    # credit differs from the cost by is 51200 (either side).
    "purchase_return": (
        Leg("total", "debit", c.PAYABLE, party=True),
        Leg("cost", "credit", c.INVENTORY),
        Leg("tax", "credit", c.INPUT_TAX),
        Leg("difference", "credit", c.PURCHASE_RETURNS),
    ),
    "opening_stock": (
        Leg("cost", "debit", c.INVENTORY),
        Leg("cost", "credit", c.OPENING_EQUITY),
    ),
    # Filling a stock deficit (negative stock sold at purchase_price) at the real
    # cost of the units that arrived: the difference is cost of goods sold.
    "deficit_settlement": (
        Leg("variance", "debit", c.COGS),
        Leg("variance", "credit", c.INVENTORY),
    ),
    # What a customer already owed, or a supplier was already owed, when the shop
    # started its books here: posted once, when the party is set up, against
    # Opening Balance Equity, on the party's sub-ledger in one warehouse.
    "opening_balance_customer": (
        Leg("amount", "debit", c.RECEIVABLE, party=True),
        Leg("amount", "credit", c.OPENING_EQUITY),
    ),
    "opening_balance_supplier": (
        Leg("amount", "debit", c.OPENING_EQUITY),
        Leg("amount", "credit", c.PAYABLE, party=True),
    ),
    # Closing a year: every income and expense account's balance for the year,
    # given as (account, credit − debit), is moved out of it by a line on the other
    # side (an income account's credit balance is debited away, an expense's debit
    # balance credited away), and the year's net profit goes to retained earnings
    # (a loss debits it).
    # Stock between branches: it leaves the sender at its FIFO cost into goods in
    # transit (posted in the sender's books); the receiver takes in what arrived at
    # the cost it left with, and what did not arrive is written off to cost of goods
    # sold (posted in the receiver's books); a cancelled transfer puts the units back
    # into the sender's stock at the same cost. 11750 holds exactly the value of the
    # transfers still on the road.
    "transfer_dispatch": (
        Leg("cost", "debit", c.GOODS_IN_TRANSIT),
        Leg("cost", "credit", c.INVENTORY),
    ),
    "transfer_receive": (
        Leg("received", "debit", c.INVENTORY),
        Leg("received", "credit", c.GOODS_IN_TRANSIT),
        Leg("short", "debit", c.COGS),
        Leg("short", "credit", c.GOODS_IN_TRANSIT),
    ),
    "transfer_cancel": (
        Leg("cost", "debit", c.INVENTORY),
        Leg("cost", "credit", c.GOODS_IN_TRANSIT),
    ),
    # Closing a period revalues a party's open foreign invoices at the period-end
    # rate (DESIGN §16): the receivable's (or payable's) base value moves by the
    # difference, an unrealised gain or loss; reversed on the next period's first day.
    # A rise of a receivable is a gain, of a payable a loss; negative figures flip.
    # Foreign cash (a mode's account holding a currency) is revalued the same way:
    # ``cash`` is (account, rise in its base value).
    "revaluation": (
        Leg("receivable", "debit", c.RECEIVABLE, party=True),
        Leg("payable", "credit", c.PAYABLE, party=True),
        Leg("cash", "debit", None),
        Leg("gain", "credit", c.EXCHANGE_GAIN),
        Leg("loss", "debit", c.EXCHANGE_LOSS),
    ),
    # A gift card sold or loaded (DESIGN §18): the money taken is owed back in goods,
    # so it is a liability, not revenue, and carries no sales tax (tax is charged
    # when the card is spent on taxed goods).
    "gift_card_sale": (
        Leg("tenders", "debit", None),
        Leg("amount", "credit", c.GIFT_CARDS),
    ),
    # A card past its expiry: what it still held is no longer owed; the shop keeps it.
    "gift_card_breakage": (
        Leg("amount", "debit", c.GIFT_CARDS),
        Leg("amount", "credit", c.BREAKAGE_INCOME),
    ),
    # The value of outstanding loyalty points moved to a new point value (or a
    # void's points moved back at today's value, not the sale's): 21400 owes
    # points × the current value again. A rise costs 41300, a fall gives it back.
    "loyalty_revaluation": (
        Leg("amount", "debit", c.SALES_DISCOUNTS),
        Leg("amount", "credit", c.LOYALTY_POINTS),
    ),
    "year_end_close": (
        Leg("balances", "debit", None),
        Leg("earnings", "credit", c.RETAINED_EARNINGS),
    ),
    # Cash moved between a till's drawer and another account without a sale: a float
    # top-up from the bank (positive: the drawer's account is debited) or a drop of
    # takings to the bank or safe (negative: the legs change sides). ``drawer`` and
    # ``counter`` are (account, amount) pairs of the same signed amount.
    "drawer_transfer": (
        Leg("drawer", "debit", None),
        Leg("counter", "credit", None),
    ),
    # Closing a shift: each payment mode's counted − expected (positive: over) moves
    # its account, and the total goes to 52500 (an over credits it, a short debits it).
    "cash_over_short": (
        Leg("differences", "debit", None),
        Leg("total", "credit", c.CASH_OVER_SHORT),
    ),
}


def figure_names(rule: RuleName) -> frozenset[str]:
    """The figures ``rule`` must be given: each exactly once, no others."""
    return frozenset(leg.amount for leg in RULES[rule])


assert set(RULES) == set(get_args(RuleName)), "every rule name has its legs"
