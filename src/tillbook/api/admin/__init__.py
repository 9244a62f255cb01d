"""The back-office API (``/api/v1/admin``): staff sessions, staff members, the audit
trail, webhook management, the reports, the company's catalog (products and their
listings), reference data (units, categories, brands, taxes, payment modes, expense
categories, warehouses), customers and suppliers, money in and out (payments,
expenses and their approval, moves between cash and bank), stocktakes, purchase
orders, batch price changes, the company's currencies and exchange rates, gift cards
and loyalty points. Thin routers,
one service call each; every route names its permission with ``deps.Allowed``
(``auth/roles.py``) and
every POST runs through ``api.idempotent.run_admin_write`` (or ``run_admin_unit``)."""

from fastapi import APIRouter

from tillbook.api.admin import (
    audit,
    brands,
    catalog_import_export,
    categories,
    currencies,
    expense_categories,
    gift_cards,
    ledgers,
    loyalty,
    money,
    parties,
    payment_modes,
    periods,
    price_changes,
    products,
    promotions,
    purchase_orders,
    registers,
    reports,
    session,
    staff,
    stock_counts,
    taxes,
    units,
    warehouses,
    webhooks,
)

router = APIRouter()
router.include_router(session.router)
router.include_router(webhooks.router)
router.include_router(reports.router)
router.include_router(staff.router)
router.include_router(registers.router)
router.include_router(audit.router)
router.include_router(ledgers.router)
router.include_router(periods.router)
router.include_router(products.router)
router.include_router(catalog_import_export.router)
router.include_router(parties.router)
router.include_router(money.router)
router.include_router(stock_counts.router)
router.include_router(purchase_orders.router)
router.include_router(currencies.router)
router.include_router(price_changes.router)
router.include_router(gift_cards.router)
router.include_router(promotions.router)
router.include_router(loyalty.router)
for family in (units, categories, brands, taxes, payment_modes, expense_categories, warehouses):
    router.include_router(family.router)
