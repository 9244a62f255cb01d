"""The public v1 API: thin routers, one service call each."""

from fastapi import APIRouter

from tillbook.api.public import (
    adjustments,
    catalog,
    gift_cards,
    loyalty,
    parties,
    payments,
    promotions,
    purchases,
    reference,
    registers,
    returns,
    sales,
    shifts,
    terminals,
    transfers,
)

router = APIRouter()
router.include_router(catalog.router)
router.include_router(parties.router)
router.include_router(reference.router)
router.include_router(sales.router)
router.include_router(purchases.router)
router.include_router(adjustments.router)
router.include_router(payments.router)
router.include_router(returns.router)
router.include_router(terminals.router)
router.include_router(shifts.router)
router.include_router(transfers.router)
router.include_router(registers.router)
router.include_router(gift_cards.router)
router.include_router(promotions.router)
router.include_router(loyalty.router)
