"""The company's own settings as the back office edits them (``settings.write``).

Only the money format for now: how amounts are written on the back office's pages.
A change is audited like every set-up change; CSV files keep plain decimals.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.audit import service as audit
from tillbook.errors import NotFound, invalid
from tillbook.models import Company, Warehouse
from tillbook.models.tenancy import MONEY_FORMATS


def settings_view(company: Company) -> dict[str, Any]:
    return {"id": company.id, "name": company.name, "money_format": company.money_format}


async def _company(session: AsyncSession, company_id: int) -> Company:
    company = await session.get(Company, company_id)
    if company is None:
        raise NotFound(f"company {company_id} not found")
    return company


async def settings_of(session: AsyncSession, company_id: int) -> dict[str, Any]:
    return settings_view(await _company(session, company_id))


async def page_settings(session: AsyncSession, company_id: int) -> tuple[str, dict[int, str]]:
    """What every page writes with: the company's money format and each branch's
    time zone (read with the staff member on every page: two small reads by key)."""
    money_format = (
        await session.execute(select(Company.money_format).where(Company.id == company_id))
    ).scalar_one_or_none()
    zones = (
        await session.execute(
            select(Warehouse.id, Warehouse.timezone).where(Warehouse.company_id == company_id)
        )
    ).all()
    return money_format or "1,234.56", {wid: zone for wid, zone in zones}


async def set_money_format(
    session: AsyncSession, company_id: int, actor_id: int | None, money_format: str
) -> Company:
    if money_format not in MONEY_FORMATS:
        raise invalid("money_format", "must be one of " + ", ".join(MONEY_FORMATS))
    company = await _company(session, company_id)
    before = company.money_format
    if before != money_format:
        company.money_format = money_format
        await audit.record(
            session,
            company_id=company_id,
            actor_id=actor_id,
            action="company.updated",
            entity_type="company",
            entity_id=company_id,
            before={"money_format": before},
            after={"money_format": money_format},
        )
    return company
