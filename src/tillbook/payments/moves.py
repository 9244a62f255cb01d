"""Money moved between two of the company's cash and bank accounts: takings paid
into the bank (from the ``cash`` mode's account to the ``bank`` mode's), cash drawn
from the bank for the drawer, card settlements swept from the clearing account.

Each payment mode maps to one account (``payments.setup``); a move names two modes
and posts Dr the receiving mode's account / Cr the sending one's (rule
``account_move``) in the branch it is recorded for. Nothing is earned or spent, so
no other account moves. Two modes of one account would move nothing: refused.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import ColumnElement, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.audit.service import record
from tillbook.auth.context import AuthContext
from tillbook.kit.money import money_str
from tillbook.kit.pagination import Page, envelope
from tillbook.kit.problems import Problems
from tillbook.ledger.service import post
from tillbook.models import JournalEntry, JournalLine
from tillbook.orders import lookup
from tillbook.payments.schemas import AccountMoveIn
from tillbook.unit import UnitOfWork

SOURCE = "account_move"


async def move_money(uow: UnitOfWork, key: AuthContext, body: AccountMoveIn) -> dict[str, Any]:
    session = uow.session
    problems = Problems()
    modes = await lookup.payment_modes(
        session,
        key.company_id,
        [
            ("from_payment_mode_id", body.from_payment_mode_id),
            ("to_payment_mode_id", body.to_payment_mode_id),
        ],
        problems,
        version=key.reference_version,
    )
    source, target = modes.get("from_payment_mode_id"), modes.get("to_payment_mode_id")
    if source is not None and target is not None:
        if source.id == target.id:
            problems.add("to_payment_mode_id", "choose another mode than the one it comes from")
        elif source.account_code == target.account_code:
            problems.add(
                "to_payment_mode_id",
                f"{source.name} and {target.name} both post to account "
                f"{source.account_code}: nothing would move",
            )
    problems.raise_if_any()
    assert source is not None and target is not None
    day = body.date or dt.date.today()
    entry = await post(
        uow,
        company_id=key.company_id,
        warehouse_id=key.warehouse_id,
        rule="account_move",
        figures={
            "to": [(target.account_code, body.amount)],
            "from": [(source.account_code, body.amount)],
        },
        narration=f"Money moved from {source.name} to {target.name}"
        + (f" ({body.reference})" if body.reference else "")
        + (f": {body.notes}" if body.notes else ""),
        source_type=SOURCE,
        source_id=None,
        field="amount",
        entry_date=day,
        created_by=key.user_id,
    )
    await record(
        uow.session,
        company_id=key.company_id,
        actor=key.actor,
        action="money.moved",
        entity_type="journal_entry",
        entity_id=entry,
        after={
            "warehouse_id": key.warehouse_id,
            "from_account_code": source.account_code,
            "to_account_code": target.account_code,
            "amount": money_str(body.amount),
        },
    )
    return {
        "status": "success",
        "journal_entry_id": entry,
        "from_payment_mode_id": source.id,
        "to_payment_mode_id": target.id,
        "from_account_code": source.account_code,
        "to_account_code": target.account_code,
        "amount": money_str(body.amount),
        "date": day.isoformat(),
    }


async def moves_page(
    session: AsyncSession, company_id: int, warehouse_ids: list[int] | None, page: Page
) -> dict[str, Any]:
    """The moves recorded in these branches (None: the whole company), newest first
    (their entries: the date, the narration naming both modes, the amount)."""
    conditions: list[ColumnElement[bool]] = [
        JournalEntry.company_id == company_id,
        JournalEntry.source_type == SOURCE,
    ]
    if warehouse_ids is not None:
        conditions.append(JournalEntry.warehouse_id.in_(warehouse_ids))
    total = (await session.execute(select(func.count()).where(*conditions))).scalar_one()
    rows = (
        await session.execute(
            select(JournalEntry, func.sum(JournalLine.debit))
            .join(
                JournalLine,
                (JournalLine.entry_id == JournalEntry.id)
                & (JournalLine.company_id == JournalEntry.company_id),
            )
            .where(*conditions, JournalLine.company_id == company_id)
            .group_by(JournalEntry.id, JournalEntry.company_id)
            .order_by(JournalEntry.entry_date.desc(), JournalEntry.id.desc())
            .offset(page.offset)
            .limit(page.limit)
        )
    ).all()
    return envelope(
        page,
        total,
        [
            {
                "journal_entry_id": e.id,
                "date": e.entry_date.isoformat(),
                "warehouse_id": e.warehouse_id,
                "narration": e.narration,
                "amount": money_str(amount),
            }
            for e, amount in rows
        ],
    )
