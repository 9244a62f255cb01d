"""Report queries on the ``shop`` fixture: figures checked against the opening stock.

Opening stock of the shop: apple juice 10 @ 1.50 + 10 @ 2.00 = 35.00, still water
100 @ 0.3333 = 33.33 (main warehouse, 68.33), harbour coffee 5 @ 2.50 = 12.50
(other warehouse); every batch posted Dr 11700 / Cr 31100.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest

from tests.factories import Shop
from tillbook.db import Database
from tillbook.errors import NotFound, ValidationFailed
from tillbook.inventory import service as inventory
from tillbook.kit import xid
from tillbook.ledger.service import post
from tillbook.reports import (
    balance_sheet,
    profit_loss,
    stock_valuation,
    stock_valuation_company,
    trial_balance,
)
from tillbook.unit import UnitOfWork

D = Decimal
TODAY = dt.date.today()


def by_code(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {a["code"]: a for a in report["accounts"]}


async def test_trial_balance_after_opening_stock(db: Database, shop: Shop) -> None:
    tb = await db.read(lambda s: trial_balance(s, shop.company_id))
    assert set(tb) >= {"company_id", "as_of", "accounts", "total_debit", "total_credit"}
    assert tb["company_id"] == shop.company_id
    assert tb["as_of"] == TODAY.isoformat()
    accounts = by_code(tb)
    assert "11100" not in accounts  # the cash parent is not a posting account
    # the standard chart: 31200 Retained Earnings, 11750 Goods in Transit and 52500
    # Cash Over/Short included
    # the standard chart, 11110 Bank, 11800 Input Tax, 21300, 21400 and 41500 included
    assert len(accounts) == 26
    assert accounts["11700"] == {
        "code": "11700",
        "name": "Inventory Asset",
        "type": "asset",
        "debit": "80.83",
        "credit": "0.00",
        "balance": "80.83",
    }
    assert accounts["31100"]["credit"] == "80.83"
    assert accounts["31100"]["balance"] == "-80.83"
    assert accounts["41100"]["balance"] == "0.00"
    assert tb["total_debit"] == tb["total_credit"] == "80.83"
    assert [a["code"] for a in tb["accounts"]] == sorted(accounts)


async def test_trial_balance_per_warehouse_and_period(db: Database, shop: Shop) -> None:
    main = await db.read(lambda s: trial_balance(s, shop.company_id, shop.warehouse_id))
    assert by_code(main)["11700"]["debit"] == "68.33"
    assert main["total_debit"] == main["total_credit"] == "68.33"
    other = await db.read(lambda s: trial_balance(s, shop.company_id, shop.other_warehouse_id))
    assert by_code(other)["31100"]["credit"] == "12.50"

    today = await db.read(lambda s: trial_balance(s, shop.company_id, None, TODAY, TODAY))
    assert today["total_debit"] == "80.83"
    later = TODAY + dt.timedelta(days=1)
    future = await db.read(lambda s: trial_balance(s, shop.company_id, None, later, None))
    assert future["total_debit"] == future["total_credit"] == "0.00"
    earlier = TODAY - dt.timedelta(days=1)
    past = await db.read(lambda s: trial_balance(s, shop.company_id, None, None, earlier))
    assert past["total_debit"] == "0.00"
    assert past["as_of"] == earlier.isoformat()


async def test_stock_valuation_matches_gl(db: Database, shop: Shop) -> None:
    sv = await db.read(lambda s: stock_valuation(s, shop.company_id, shop.warehouse_id))
    assert sv["warehouse_id"] == shop.warehouse_id
    products = {p["product_id"]: p for p in sv["products"]}
    apple = products[shop.products["apple"]]
    assert apple == {
        "product_id": shop.products["apple"],
        "xid": xid.encode(shop.products["apple"]),
        "name": "Apple juice",
        "current_stock": 20,
        "value": "35.00",
    }
    assert products[shop.products["water"]]["value"] == "33.33"
    assert products[shop.products["water"]]["current_stock"] == 100
    assert products[shop.products["tea"]]["value"] == "0.00"
    assert shop.other_products["coffee"] not in products
    assert sv["total_value"] == sv["gl_inventory_balance"] == "68.33"

    other = await db.read(lambda s: stock_valuation(s, shop.company_id, shop.other_warehouse_id))
    assert other["total_value"] == other["gl_inventory_balance"] == "12.50"

    whole = await db.read(lambda s: stock_valuation_company(s, shop.company_id))
    assert [w["warehouse_id"] for w in whole["warehouses"]] == [
        shop.warehouse_id,
        shop.other_warehouse_id,
    ]
    assert whole["total_value"] == whole["gl_inventory_balance"] == "80.83"


async def test_statements_after_opening_stock(db: Database, shop: Shop) -> None:
    pl = await db.read(lambda s: profit_loss(s, shop.company_id))
    assert pl["net_profit"] == "0.00"
    assert {a["code"] for a in pl["income"]["accounts"]} == {
        "41100",
        "41200",
        "41300",
        "41400",
        "41500",
        "71100",
    }
    bs = await db.read(lambda s: balance_sheet(s, shop.company_id))
    assert bs["assets"]["total"] == "80.83"
    assert bs["liabilities"]["total"] == "0.00"
    assert bs["equity"]["total"] == "80.83"
    assert bs["equity"]["current_earnings"] == "0.00"
    assert bs["total_liabilities_and_equity"] == "80.83"
    assert bs["balanced"] is True


async def test_reports_after_fifo_draw(db: Database, shop: Shop) -> None:
    """Write off 15 apple juice (FIFO: 10 @ 1.50 + 5 @ 2.00 = 25.00) through the same
    inventory and ledger services a stock adjustment uses, then read every report."""

    async def write_off(uow: UnitOfWork) -> D:
        products = await inventory.products(
            uow, shop.company_id, shop.warehouse_id, [shop.products["apple"]]
        )
        alloc = await inventory.draw(
            uow,
            products[shop.products["apple"]],
            D("15"),
            reason="adjustment",
            source_type="test",
            source_id=None,
            allow_negative=False,
        )
        await post(
            uow,
            company_id=shop.company_id,
            warehouse_id=shop.warehouse_id,
            rule="stock_subtract",
            figures={"cost": alloc.cost},
            narration="test write-off",
            field="quantity",
            source_type="test",
            source_id=None,
            entry_date=TODAY,
        )
        return alloc.cost

    assert await db.unit(write_off) == D("25.00")

    sv = await db.read(lambda s: stock_valuation(s, shop.company_id, shop.warehouse_id))
    apple = next(p for p in sv["products"] if p["product_id"] == shop.products["apple"])
    assert apple["current_stock"] == 5
    assert apple["value"] == "10.00"
    assert sv["total_value"] == sv["gl_inventory_balance"] == "43.33"

    tb = await db.read(lambda s: trial_balance(s, shop.company_id))
    accounts = by_code(tb)
    assert accounts["11700"]["credit"] == "25.00"
    assert accounts["11700"]["balance"] == "55.83"
    assert accounts["51100"]["debit"] == "25.00"
    assert tb["total_debit"] == tb["total_credit"] == "105.83"

    pl = await db.read(lambda s: profit_loss(s, shop.company_id, shop.warehouse_id))
    assert pl["expenses"]["total"] == "25.00"
    assert pl["net_profit"] == "-25.00"
    other = await db.read(lambda s: profit_loss(s, shop.company_id, shop.other_warehouse_id))
    assert other["net_profit"] == "0.00"

    bs = await db.read(lambda s: balance_sheet(s, shop.company_id))
    assert bs["assets"]["total"] == "55.83"
    assert bs["equity"]["current_earnings"] == "-25.00"
    assert bs["equity"]["total"] == "55.83"
    assert bs["balanced"] is True
    before = await db.read(
        lambda s: balance_sheet(s, shop.company_id, None, TODAY - dt.timedelta(days=1))
    )
    assert before["assets"]["total"] == "0.00"


async def test_unknown_scope_is_not_found(db: Database, shop: Shop) -> None:
    with pytest.raises(NotFound, match="company 987654321 not found"):
        await db.read(lambda s: trial_balance(s, 987654321))
    other_company = await _other_shop_warehouse(db)
    with pytest.raises(NotFound, match="not found in company"):
        await db.read(lambda s: trial_balance(s, shop.company_id, other_company))
    with pytest.raises(NotFound):
        await db.read(lambda s: stock_valuation(s, shop.company_id, other_company))
    with pytest.raises(ValidationFailed):
        await db.read(
            lambda s: profit_loss(s, shop.company_id, None, TODAY, TODAY - dt.timedelta(days=1))
        )


async def _other_shop_warehouse(db: Database) -> int:
    from tests.factories import make_shop

    return (await make_shop(db)).warehouse_id
