"""The standard chart of accounts created with every company (DESIGN.md §4)."""

from __future__ import annotations

from typing import NamedTuple


class AccountSpec(NamedTuple):
    code: str
    name: str
    type: str
    parent_code: str | None = None
    is_posting: bool = True


CASH_PARENT = "11100"
CASH_ON_HAND = "11101"
CARD_CLEARING = "11105"
BANK_ACCOUNT = "11110"
RECEIVABLE = "11500"
INVENTORY = "11700"
GOODS_IN_TRANSIT = "11750"
INPUT_TAX = "11800"
PAYABLE = "21100"
SALES_TAX = "21200"
GIFT_CARDS = "21300"
LOYALTY_POINTS = "21400"
OPENING_EQUITY = "31100"
RETAINED_EARNINGS = "31200"
SALES_REVENUE = "41100"
SALES_RETURNS = "41200"
SALES_DISCOUNTS = "41300"
SHIPPING_INCOME = "41400"
BREAKAGE_INCOME = "41500"
COGS = "51100"
PURCHASE_RETURNS = "51200"
FUEL_ENERGY = "52100"
GATEWAY_CHARGES = "52300"
CASH_OVER_SHORT = "52500"
GENERAL_EXPENSES = "52900"
EXCHANGE_GAIN = "71100"
EXCHANGE_LOSS = "71200"

STANDARD_CHART: tuple[AccountSpec, ...] = (
    AccountSpec(CASH_PARENT, "Cash & Bank Accounts", "asset", None, False),
    AccountSpec(CASH_ON_HAND, "Cash on Hand", "asset", CASH_PARENT),
    AccountSpec(CARD_CLEARING, "Card / Terminal Clearing", "asset", CASH_PARENT),
    AccountSpec(BANK_ACCOUNT, "Bank Account", "asset", CASH_PARENT),
    AccountSpec(RECEIVABLE, "Accounts Receivable", "asset"),
    AccountSpec(INVENTORY, "Inventory Asset", "asset"),
    AccountSpec(GOODS_IN_TRANSIT, "Goods in Transit", "asset"),
    AccountSpec(INPUT_TAX, "Input Tax Recoverable", "asset"),
    AccountSpec(PAYABLE, "Accounts Payable", "liability"),
    AccountSpec(SALES_TAX, "Sales Tax Payable", "liability"),
    # Money the shop owes in goods (DESIGN §18): gift card and store-credit
    # balances; loyalty points at their value.
    AccountSpec(GIFT_CARDS, "Gift Cards and Store Credit", "liability"),
    AccountSpec(LOYALTY_POINTS, "Loyalty Points", "liability"),
    AccountSpec(OPENING_EQUITY, "Opening Balance Equity", "equity"),
    AccountSpec(RETAINED_EARNINGS, "Retained Earnings", "equity"),
    AccountSpec(SALES_REVENUE, "Sales Revenue", "income"),
    AccountSpec(SALES_RETURNS, "Sales Returns", "contra-income"),
    AccountSpec(SALES_DISCOUNTS, "Sales Discounts", "contra-income"),
    AccountSpec(SHIPPING_INCOME, "Shipping Income", "income"),
    # What expired gift cards held: the shop keeps it.
    AccountSpec(BREAKAGE_INCOME, "Breakage Income", "income"),
    AccountSpec(COGS, "Cost of Goods Sold", "expense"),
    AccountSpec(PURCHASE_RETURNS, "Purchase Returns", "contra-expense"),
    AccountSpec(FUEL_ENERGY, "Fuel and Energy", "expense"),
    AccountSpec(GATEWAY_CHARGES, "Bank and Gateway Charges", "expense"),
    AccountSpec(CASH_OVER_SHORT, "Cash Over/Short", "expense"),
    AccountSpec(GENERAL_EXPENSES, "General Expenses", "expense"),
    AccountSpec(EXCHANGE_GAIN, "Exchange Gain", "income"),
    AccountSpec(EXCHANGE_LOSS, "Exchange Loss", "expense"),
)
