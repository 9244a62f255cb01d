"""Read-only reports over the books: trial balance, statements, stock valuation.

Every report reads in one transaction, filters on the company (and, when asked,
the warehouse), and returns plain dicts with money as two-place decimal strings,
the same shape the ``tillbook report ... --json`` command prints.
"""

from tillbook.reports.statements import balance_sheet, profit_loss
from tillbook.reports.stock import (
    stock_valuation,
    stock_valuation_company,
    stock_valuation_page,
)
from tillbook.reports.trial_balance import trial_balance

__all__ = [
    "balance_sheet",
    "profit_loss",
    "stock_valuation",
    "stock_valuation_company",
    "stock_valuation_page",
    "trial_balance",
]
