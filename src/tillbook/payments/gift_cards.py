"""POST /gift-cards and POST /gift-cards/balance: selling, loading and checking a
gift card (DESIGN §18).

Selling or loading is money in that the shop owes back in goods: Dr each tender's
account, Cr 21300, no tax (tax is charged when the card pays for taxed goods). Each
tender is a payment ``in`` from the buyer (the walk-in customer when none is
named) with nothing to allocate, so the till's shift expects the cash in its
drawer; the buyer's account (11500) does not move. The tenders pay the whole
amount: a card is never sold on credit. A gift-card tender cannot buy a card
(``lookup.payment_modes`` refuses the mode here), nor can foreign cash.

The new card's code is in this answer only (``codes``); the idempotency record
keeps the answer without it (the route adds it to the first answer).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import select

from tillbook.audit.service import record
from tillbook.auth.context import AuthContext, acting_for
from tillbook.errors import invalid
from tillbook.giftcards import codes, queries
from tillbook.giftcards import service as giftcards
from tillbook.giftcards.queries import CardView
from tillbook.kit.money import ZERO, money_str
from tillbook.kit.problems import Problems
from tillbook.kit.shapes import MoneyStr, answer
from tillbook.ledger.service import Pair
from tillbook.models import Payment, User
from tillbook.orders import lookup, shifts
from tillbook.payments.schemas import GiftCardCodeIn, GiftCardIn
from tillbook.unit import UnitOfWork

# A card's expiry is at most this far ahead (a date the books can hold and a shop
# could mean); later is a typo.
LONGEST = dt.timedelta(days=366 * 20)


@answer
class GiftCardData(CardView):
    # A card sold or loaded: the card as ``giftcards.queries.card_view`` shows it
    # (its ``code`` here in full on the first answer, ``code_in_full``), with what
    # this sale put on it.
    code_in_full: bool
    amount: MoneyStr
    journal_entry_id: int | None


async def _buyer(
    uow: UnitOfWork, key: AuthContext, body: GiftCardIn, problems: Problems
) -> User | None:
    if body.user_id is not None:
        return await lookup.party(
            uow, key.company_id, body.user_id, "customer", "user_id", problems
        )
    found = (
        await uow.session.execute(
            select(User)
            .where(
                User.company_id == key.company_id,
                User.user_type == "customer",
                User.is_walk_in.is_(True),
                User.archived_at.is_(None),
            )
            .order_by(User.id)
            .limit(1)
        )
    ).scalar_one_or_none()
    if found is None:
        problems.add(
            "user_id", "name the customer buying the card (the company has no walk-in customer)"
        )
    return found


async def sell_card(
    uow: UnitOfWork, key: AuthContext, body: GiftCardIn
) -> tuple[GiftCardData, str | None]:
    """A new card (no ``code``) or more on an existing one. The answer shows the
    code masked; a new card's code in full comes beside it, for the route to show
    once (``reveal_code``)."""
    problems = Problems()
    today = dt.date.today()
    date = body.date or today
    buyer = await _buyer(uow, key, body, problems)
    fields = [f"all_payments.{i}.payment_mode_id" for i in range(len(body.all_payments))]
    modes = await lookup.payment_modes(
        uow.session,
        key.company_id,
        [(f, t.payment_mode_id) for f, t in zip(fields, body.all_payments, strict=True)],
        problems,
        version=key.reference_version,
    )
    for i, (f, tender) in enumerate(zip(fields, body.all_payments, strict=True)):
        mode = modes.get(f)
        if tender.gift_card_code is not None:
            problems.add(f"all_payments.{i}.gift_card_code", "a gift card cannot buy a gift card")
        if tender.foreign_amount is not None or (mode is not None and mode.currency is not None):
            problems.add(f, "gift cards are sold in the base currency: take foreign cash on a sale")
    paid = sum((t.amount for t in body.all_payments), ZERO)
    if paid != body.amount:
        problems.add(
            "all_payments", f"tenders add up to {paid}: they must pay the card's {body.amount}"
        )
    card = None
    if body.code is not None:
        card = await giftcards.card_by_code(uow.session, key.company_id, body.code)
        if card is None or not giftcards.usable(card, today):
            problems.add("code", giftcards.NO_CARD.replace("pay", "be loaded"))
        if body.expires_on is not None:
            problems.add("expires_on", "a card keeps the expiry it was sold with")
    elif body.expires_on is not None and not (today < body.expires_on <= today + LONGEST):
        problems.add(
            "expires_on", f"must be after today and at most 20 years ahead, got {body.expires_on}"
        )
    problems.raise_if_any()
    assert buyer is not None
    shift_id = await shifts.current(uow, key)
    rows = [
        Payment(
            company_id=key.company_id,
            warehouse_id=key.warehouse_id,
            user_id=buyer.id,
            payment_type="in",
            amount=tender.amount,
            unallocated_amount=ZERO,
            payment_mode_id=modes[f].id,
            date=date,
            reference=tender.reference or "gift card",
            notes=tender.notes or "",
            order_id=None,
            created_by=key.user_id,
            shift_id=shift_id,
        )
        for f, tender in zip(fields, body.all_payments, strict=True)
    ]
    tenders: list[Pair] = [
        (modes[f].account_code, t.amount) for f, t in zip(fields, body.all_payments, strict=True)
    ]
    card, code, entry_id = await giftcards.sell(
        uow,
        company_id=key.company_id,
        warehouse_id=key.warehouse_id,
        card=card,
        amount=body.amount,
        tenders=tenders,
        customer_id=None if buyer.is_walk_in else buyer.id,
        expires_on=body.expires_on,
        date=date,
        created_by=key.user_id,
        field="amount",
    )
    for row in rows:
        row.journal_entry_id = entry_id
    uow.session.add_all(rows)
    await uow.session.flush()
    answer: GiftCardData = {
        **queries.card_view(card, None if buyer.is_walk_in else buyer.name),
        "amount": money_str(body.amount),
        "journal_entry_id": entry_id,
        "code_in_full": False,
    }
    return answer, codes.shown(code) if code else None


def reveal_code(answer: dict[str, Any], code: str | None) -> dict[str, Any]:
    """The first answer for a new card carries its code in full (to print on the
    receipt); the stored answer a replay returns does not: it is kept nowhere.
    ``answer`` is the enveloped one (``data`` the card), as it is stored."""
    if code is None:
        return answer
    return {**answer, "data": {**answer["data"], "code": code, "code_in_full": True}}


async def check_balance(
    uow: UnitOfWork, key: AuthContext, body: GiftCardCodeIn
) -> queries.GiftCardBalanceData:
    """What a usable card holds. An unknown code, an expired card and a spent one
    are one 422 naming ``code`` with one message (``giftcards.NO_CARD``): the answer
    tells a guesser nothing about which codes exist."""
    today = dt.date.today()
    card = await giftcards.card_by_code(uow.session, key.company_id, body.code)
    if card is None or not giftcards.usable(card, today) or card.balance <= 0:
        raise invalid("code", giftcards.NO_CARD)
    return queries.balance_view(card, today)


async def sell_in_branch(
    uow: UnitOfWork, company_id: int, warehouse_id: int, actor_id: int, body: GiftCardIn
) -> tuple[GiftCardData, str | None]:
    """``sell_card`` as a staff member records it in the back office, for one branch
    (``auth.context.acting_for``), in the audit trail (never with the code)."""
    key = await acting_for(uow.session, company_id, warehouse_id, actor_id)
    data, code = await sell_card(uow, key, body)
    await record(
        uow.session,
        company_id=company_id,
        actor_id=actor_id,
        action="gift_card.sold" if code else "gift_card.loaded",
        entity_type="gift_card",
        entity_id=data["id"],
        after={
            "warehouse_id": warehouse_id,
            "code": data["code"],
            "amount": data["amount"],
            "balance": data["balance"],
            "expires_on": data["expires_on"],
        },
    )
    return data, code
