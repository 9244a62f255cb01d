"""The back-office API (``/api/v1/admin``): the company administrator's session,
webhook management, the reports, the company's catalog (products and their
listings) and reference data (units, categories, brands, taxes, payment modes,
expense categories, warehouses). Thin routers, one service call each."""

from fastapi import APIRouter

from tillbook.api.admin import (
    brands,
    categories,
    expense_categories,
    ledgers,
    payment_modes,
    periods,
    products,
    reports,
    session,
    taxes,
    units,
    warehouses,
    webhooks,
)

router = APIRouter()
router.include_router(session.router)
router.include_router(webhooks.router)
router.include_router(reports.router)
router.include_router(ledgers.router)
router.include_router(periods.router)
router.include_router(products.router)
for family in (units, categories, brands, taxes, payment_modes, expense_categories, warehouses):
    router.include_router(family.router)
