"""The back-office API (``/api/v1/admin``): the company administrator's session,
webhook management, the reports, customers and suppliers. Thin routers, one service call each."""

from fastapi import APIRouter

from tillbook.api.admin import parties, reports, session, webhooks

router = APIRouter()
router.include_router(session.router)
router.include_router(webhooks.router)
router.include_router(reports.router)
router.include_router(parties.router)
