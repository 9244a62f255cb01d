"""Balances of gift cards and store credit, moved beside the entries that move 21300.

Every function here runs in the caller's unit of work and writes, for each change
of a balance, one ``GiftCardMovement`` naming the order and the journal entry that
carried the same amount on 21300: the invariant GL 21300 = Σ balances holds
after every commit, and a card's statement is its movements.

A spend is a guarded update (``balance >= amount`` in its WHERE): two sales racing
for the last of one card cannot both take it, on PostgreSQL (the second waits
for the first's row lock and re-reads the balance) or SQLite (one writer at a
time). The loser's request is a 422 naming its tender's field, and its unit rolls
back whatever it wrote before.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.errors import invalid
from tillbook.giftcards import codes
from tillbook.kit.money import ZERO
from tillbook.kit.problems import Problems
from tillbook.ledger.service import Pair, post
from tillbook.models import GiftCard, GiftCardMovement, User
from tillbook.unit import UnitOfWork

# One message for a code that names no card, an expired card and an empty one: a
# guesser learns nothing from which it was (the holder of a real card knows).
NO_CARD = "no gift card with this code can pay: it is unknown, expired or spent"


@dataclass(frozen=True)
class Ask:
    """One tender of an order in the gift-card mode (a mode posting to 21300), or
    one carrying a ``gift_card_code``."""

    index: int
    code: str | None
    amount: Decimal
    gift_mode: bool

    @property
    def code_field(self) -> str:
        return f"all_payments.{self.index}.gift_card_code"


@dataclass(frozen=True)
class Draw:
    """A checked tender: ``amount`` off (or onto) the card ``card_id``; a customer's
    store credit not yet opened has no card yet (``card_id`` None, refunds only)."""

    field: str
    amount: Decimal
    card_id: int | None
    customer_id: int | None = None


def usable(card: GiftCard | None, today: dt.date) -> bool:
    return (
        card is not None
        and card.status == "active"
        and (card.expires_on is None or card.expires_on >= today)
    )


async def card_by_code(session: AsyncSession, company_id: int, code: str) -> GiftCard | None:
    """The company's card with this code (any shape a person might type), or None."""
    normal = codes.normalize(code)
    if normal is None:
        return None
    return (
        await session.execute(
            select(GiftCard).where(
                GiftCard.company_id == company_id,
                GiftCard.lookup_key == codes.lookup_key(company_id, normal),
                GiftCard.kind == "card",
            )
        )
    ).scalar_one_or_none()


async def store_credit(session: AsyncSession, company_id: int, customer_id: int) -> GiftCard | None:
    return (
        await session.execute(
            select(GiftCard).where(
                GiftCard.company_id == company_id,
                GiftCard.lookup_key == codes.credit_key(customer_id),
            )
        )
    ).scalar_one_or_none()


def _mode_problems(asks: Sequence[Ask], problems: Problems) -> list[Ask]:
    """The asks that draw on a card or store credit; a code on another mode is a 422."""
    out = []
    for ask in asks:
        if ask.code is not None and not ask.gift_mode:
            problems.add(
                ask.code_field,
                "this tender's payment mode is not a gift-card mode: send the gift card "
                "with payment_mode_id gift-card",
            )
        elif ask.gift_mode:
            out.append(ask)
    return out


async def spends(
    session: AsyncSession,
    company_id: int,
    customer: User,
    asks: Sequence[Ask],
    *,
    today: dt.date,
    foreign: bool,
    problems: Problems,
) -> list[Draw]:
    """A sale's tenders in the gift-card mode, checked on unlocked reads: each names
    a usable card with enough for its amount (several tenders of one card add up),
    or, without a code, draws on the customer's store credit. Problems are added
    under each tender's field; the guarded update in ``take`` has the last word."""
    drawing = _mode_problems(asks, problems)
    if drawing and foreign:
        for ask in drawing:
            problems.add(
                f"all_payments.{ask.index}.payment_mode_id",
                "gift cards and store credit hold the base currency: spend them on a sale "
                "in the base currency",
            )
        return []
    draws: list[Draw] = []
    wanted: dict[int, Decimal] = {}
    held: dict[int, Decimal] = {}
    for ask in drawing:
        if ask.code is not None:
            card = await card_by_code(session, company_id, ask.code)
            field = ask.code_field
            if card is None or not usable(card, today) or card.balance <= 0:
                problems.add(field, NO_CARD)
                continue
        else:
            field = f"all_payments.{ask.index}.amount"
            card = await store_credit(session, company_id, customer.id)
            if card is None or card.balance <= 0:
                problems.add(field, f"{customer.name} has no store credit to spend")
                continue
        wanted[card.id] = wanted.get(card.id, ZERO) + ask.amount
        held[card.id] = card.balance
        if wanted[card.id] > card.balance:
            what = "the card holds" if ask.code is not None else "the customer's store credit is"
            problems.add(
                field, f"{what} {card.balance}, less than the {wanted[card.id]} tendered from it"
            )
            continue
        draws.append(Draw(field, ask.amount, card.id))
    return draws


async def refunds(
    session: AsyncSession,
    company_id: int,
    customer: User,
    asks: Sequence[Ask],
    *,
    today: dt.date,
    foreign: bool,
    problems: Problems,
) -> list[Draw]:
    """A sales return's refund tenders in the gift-card mode: onto the card named by
    ``gift_card_code`` (a usable one: an expired card takes nothing more), or onto
    the customer's store credit (a named customer: the walk-in customer is every
    till's anonymous buyer, nobody's credit)."""
    drawing = _mode_problems(asks, problems)
    draws: list[Draw] = []
    for ask in drawing:
        if foreign:
            problems.add(
                f"all_payments.{ask.index}.payment_mode_id",
                "store credit and gift cards hold the base currency: refund a foreign "
                "return in another mode",
            )
            continue
        if ask.code is not None:
            card = await card_by_code(session, company_id, ask.code)
            if card is None or not usable(card, today):
                problems.add(ask.code_field, NO_CARD.replace("pay", "take a refund"))
                continue
            draws.append(Draw(ask.code_field, ask.amount, card.id))
            continue
        if customer.is_walk_in:
            problems.add(
                f"all_payments.{ask.index}.payment_mode_id",
                "store credit needs a named customer: the walk-in customer has none; "
                "name the customer or refund onto a gift card (gift_card_code)",
            )
            continue
        credit = await store_credit(session, company_id, customer.id)
        draws.append(
            Draw(
                f"all_payments.{ask.index}.amount",
                ask.amount,
                credit.id if credit is not None else None,
                customer.id,
            )
        )
    return draws


async def _move(
    uow: UnitOfWork,
    *,
    company_id: int,
    warehouse_id: int | None,
    card_id: int,
    kind: str,
    amount: Decimal,
    balance_after: Decimal,
    order_id: int | None,
    entry_id: int | None,
    created_by: int | None,
) -> None:
    uow.session.add(
        GiftCardMovement(
            company_id=company_id,
            card_id=card_id,
            warehouse_id=warehouse_id,
            kind=kind,
            amount=amount,
            balance_after=balance_after,
            order_id=order_id,
            journal_entry_id=entry_id,
            created_by=created_by,
        )
    )


def _at_cents(value: Any) -> Any:
    """A balance computed in SQL, rounded to the cent: exact on PostgreSQL's numeric;
    SQLite adds in binary floating point, where 10.06 - 5.03 is 5.029999999999999,
    which then failed ``balance >= 5.03`` for a card holding exactly 5.03."""
    return func.round(value, 2)


async def _add(uow: UnitOfWork, company_id: int, card_id: int, amount: Decimal) -> Decimal:
    """balance += amount (a positive amount: nothing to guard); the new balance."""
    return Decimal(
        (
            await uow.session.execute(
                update(GiftCard)
                .where(GiftCard.company_id == company_id, GiftCard.id == card_id)
                .values(balance=_at_cents(GiftCard.balance + amount))
                .returning(GiftCard.balance)
            )
        ).scalar_one()
    )


async def take(
    uow: UnitOfWork,
    draws: Sequence[Draw],
    *,
    company_id: int,
    warehouse_id: int,
    order_id: int,
    entry_id: int | None,
    created_by: int | None,
) -> None:
    """Spend ``draws`` (from ``spends``), in card id order so two sales never lock
    two cards in opposite orders. A card emptied or expired since it was checked
    (a concurrent sale, an expiry run) is a 422 naming the tender."""
    for draw in sorted(draws, key=lambda d: (d.card_id or 0, d.field)):
        assert draw.card_id is not None
        left = (
            await uow.session.execute(
                update(GiftCard)
                .where(
                    GiftCard.id == draw.card_id,
                    GiftCard.company_id == company_id,
                    GiftCard.status == "active",
                    _at_cents(GiftCard.balance) >= draw.amount,
                )
                .values(balance=_at_cents(GiftCard.balance - draw.amount))
                .returning(GiftCard.balance)
            )
        ).scalar_one_or_none()
        if left is None:
            raise invalid(
                draw.field,
                f"the balance no longer covers {draw.amount}: another sale spent it first",
            )
        await _move(
            uow,
            company_id=company_id,
            warehouse_id=warehouse_id,
            card_id=draw.card_id,
            kind="spend",
            amount=-draw.amount,
            balance_after=Decimal(left),
            order_id=order_id,
            entry_id=entry_id,
            created_by=created_by,
        )


async def give(
    uow: UnitOfWork,
    draws: Sequence[Draw],
    *,
    company_id: int,
    warehouse_id: int,
    order_id: int,
    entry_id: int | None,
    created_by: int | None,
) -> None:
    """Refund ``draws`` (from ``refunds``) onto their cards or store credit, opening
    a customer's store credit on its first refund."""
    for draw in draws:
        card_id = draw.card_id
        if card_id is None:
            assert draw.customer_id is not None
            card_id = await _open_credit(
                uow, company_id, draw.customer_id, warehouse_id, created_by
            )
        left = await _add(uow, company_id, card_id, draw.amount)
        await _move(
            uow,
            company_id=company_id,
            warehouse_id=warehouse_id,
            card_id=card_id,
            kind="refund",
            amount=draw.amount,
            balance_after=left,
            order_id=order_id,
            entry_id=entry_id,
            created_by=created_by,
        )


async def _open_credit(
    uow: UnitOfWork, company_id: int, customer_id: int, warehouse_id: int, created_by: int | None
) -> int:
    """The customer's store-credit row, made now if it is their first (two first
    refunds at once: the unique ``lookup_key`` refuses the second, whose unit of
    work runs again and finds the row)."""
    found = await store_credit(uow.session, company_id, customer_id)
    if found is not None:
        return found.id
    credit = GiftCard(
        company_id=company_id,
        kind="credit",
        lookup_key=codes.credit_key(customer_id),
        last4=None,
        customer_id=customer_id,
        balance=ZERO,
        status="active",
        warehouse_id=warehouse_id,
        created_by=created_by,
    )
    uow.session.add(credit)
    await uow.session.flush()
    return credit.id


async def give_back(
    uow: UnitOfWork,
    *,
    company_id: int,
    warehouse_id: int,
    order_id: int,
    entry_id: int | None,
    created_by: int | None,
) -> None:
    """A voided sale's card and store-credit tenders go back where they came from
    (the void's reversing entry credits 21300 by the same amounts). A card that
    expired since takes its money back all the same: the next expiry run moves it."""
    spent = (
        await uow.session.execute(
            select(GiftCardMovement.card_id, GiftCardMovement.amount)
            .where(
                GiftCardMovement.order_id == order_id,
                GiftCardMovement.kind == "spend",
                GiftCardMovement.company_id == company_id,
            )
            .order_by(GiftCardMovement.card_id, GiftCardMovement.id)
        )
    ).all()
    for card_id, amount in spent:
        back = -Decimal(amount)
        left = await _add(uow, company_id, card_id, back)
        await _move(
            uow,
            company_id=company_id,
            warehouse_id=warehouse_id,
            card_id=card_id,
            kind="void",
            amount=back,
            balance_after=left,
            order_id=order_id,
            entry_id=entry_id,
            created_by=created_by,
        )


async def sell(
    uow: UnitOfWork,
    *,
    company_id: int,
    warehouse_id: int,
    card: GiftCard | None,
    amount: Decimal,
    tenders: Sequence[Pair],
    customer_id: int | None,
    expires_on: dt.date | None,
    date: dt.date,
    created_by: int | None,
    field: str,
) -> tuple[GiftCard, str | None, int | None]:
    """Sell a new card (``card`` None) or load ``card``: Dr the tenders, Cr 21300.
    Returns the card, for a new one its code in full (shown once, never stored),
    and the entry."""
    code: str | None = None
    if card is None:
        code = codes.new_code()
        card = GiftCard(
            company_id=company_id,
            kind="card",
            lookup_key=codes.lookup_key(company_id, code),
            last4=code[-4:],
            customer_id=customer_id,
            balance=ZERO,
            expires_on=expires_on,
            status="active",
            warehouse_id=warehouse_id,
            created_by=created_by,
        )
        uow.session.add(card)
        await uow.session.flush()
    shown = codes.masked(card.last4)
    entry_id = await post(
        uow,
        company_id=company_id,
        warehouse_id=warehouse_id,
        rule="gift_card_sale",
        figures={"tenders": list(tenders), "amount": amount},
        narration=f"Gift card {shown} {'sold' if code else 'loaded'}",
        field=field,
        source_type="gift_card",
        source_id=card.id,
        entry_date=date,
        party_id=None,
        created_by=created_by,
    )
    left = await _add(uow, card.company_id, card.id, amount)
    card.balance = left
    await _move(
        uow,
        company_id=company_id,
        warehouse_id=warehouse_id,
        card_id=card.id,
        kind="issue" if code else "load",
        amount=amount,
        balance_after=left,
        order_id=None,
        entry_id=entry_id,
        created_by=created_by,
    )
    return card, code, entry_id


@dataclass(frozen=True)
class Expired:
    card_id: int
    amount: Decimal
    entry_id: int | None


async def expire(
    uow: UnitOfWork, company_id: int, today: dt.date, created_by: int | None
) -> list[Expired]:
    """Every card of the company whose expiry is before ``today``: what it still
    holds moves Dr 21300 / Cr 41500 Breakage Income (one entry per card, in the
    branch that sold it) and the card is ``expired``. Cards are locked in id order;
    a sale spending one at the same moment either finished first (less is left
    to break) or finds it expired (its guarded update refuses)."""
    cards = (
        (
            await uow.session.execute(
                select(GiftCard)
                .where(
                    GiftCard.company_id == company_id,
                    GiftCard.kind == "card",
                    GiftCard.status == "active",
                    GiftCard.expires_on.is_not(None),
                    GiftCard.expires_on < today,
                )
                .order_by(GiftCard.id)
                .with_for_update()
            )
        )
        .scalars()
        .all()
    )
    done: list[Expired] = []
    for card in cards:
        rest = Decimal(card.balance)
        entry_id = None
        if rest > 0:
            entry_id = await post(
                uow,
                company_id=company_id,
                warehouse_id=card.warehouse_id,
                rule="gift_card_breakage",
                figures={"amount": rest},
                narration=f"Gift card {codes.masked(card.last4)} expired on {card.expires_on}",
                field="company_id",
                source_type="gift_card",
                source_id=card.id,
                entry_date=today,
                created_by=created_by,
            )
        await uow.session.execute(
            update(GiftCard)
            .where(GiftCard.company_id == card.company_id, GiftCard.id == card.id)
            .values(balance=ZERO, status="expired")
        )
        await _move(
            uow,
            company_id=company_id,
            warehouse_id=card.warehouse_id,
            card_id=card.id,
            kind="expire",
            amount=-rest,
            balance_after=ZERO,
            order_id=None,
            entry_id=entry_id,
            created_by=created_by,
        )
        done.append(Expired(card.id, rest, entry_id))
    return done
