"""The public v1 API: thin routers, one service call each."""

from fastapi import APIRouter

from tillbook.api.public import catalog, purchases, sales

router = APIRouter()
router.include_router(catalog.router)
router.include_router(sales.router)
router.include_router(purchases.router)
