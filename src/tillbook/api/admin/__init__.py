"""The back-office API (``/api/v1/admin``): staff sessions, staff members, the audit
trail, webhook management and the reports. Thin routers, one service call each;
every route names its permission with ``deps.Allowed`` (``auth/roles.py``) and every
POST runs through ``api.idempotent.run_admin_write``."""

from fastapi import APIRouter

from tillbook.api.admin import audit, reports, session, staff, webhooks

router = APIRouter()
router.include_router(session.router)
router.include_router(webhooks.router)
router.include_router(reports.router)
router.include_router(staff.router)
router.include_router(audit.router)
