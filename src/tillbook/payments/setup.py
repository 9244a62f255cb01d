"""Payment modes and expense categories as the back office keeps them: created,
edited and archived, never deleted (payments and expenses name them).

A payment mode posts its tenders to one cash or bank account: an existing posting
child of 11100 (named by ``account_code``) or a new one made for it under 11100
with the next free code (``create_account``). An expense category posts to one
52xxx expense account, existing or made for it the same way (``ledger/accounts.py``).
Pointing a mode or category at another account changes where new payments and
expenses post; posted entries keep theirs.

An archived mode takes no new tender (sale, purchase, return, payment, expense:
``orders.lookup.payment_modes`` refuses it, 422 naming the field); an archived
expense category takes no new expense (``payments.expenses.category``). Every write
bumps the company's reference version first (``orders.lookup.reference_changed``),
so no process's cached copy of the modes outlives the change, and holds the
company's reference lock, so names and new account codes are checked without a race.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession
from typing_extensions import TypedDict

from tillbook.audit import setup_records
from tillbook.currency import rates
from tillbook.errors import duplicate, invalid
from tillbook.kit import xid
from tillbook.kit.pagination import Page
from tillbook.kit.shapes import DateTimeStr, answer
from tillbook.ledger import accounts
from tillbook.models import Account, ExpenseCategory, PaymentMode
from tillbook.orders.lookup import reference_changed

# The back office's answers (``api/admin/payment_modes.py``,
# ``expense_categories.py``); a till reads slimmer ones (``payments/reference.py``).


@answer
class AdminPaymentMode(TypedDict):
    id: int
    xid: str
    code: str
    name: str
    account_code: str
    account_name: str
    version: int
    archived_at: DateTimeStr | None
    currency: str | None


@answer
class AdminExpenseCategory(TypedDict):
    id: int
    xid: str
    name: str
    account_code: str
    account_name: str
    version: int
    archived_at: DateTimeStr | None


def mode_view(mode: PaymentMode, account: Account) -> AdminPaymentMode:
    return {
        "id": mode.id,
        "xid": xid.encode(mode.id),
        "code": mode.code,
        "name": mode.name,
        "account_code": account.code,
        "account_name": account.name,
        "version": mode.version,
        "archived_at": setup_records.iso(mode.archived_at),
        # Additive: the foreign currency its drawer or account holds, None: the base.
        "currency": mode.currency,
    }


def expense_category_view(cat: ExpenseCategory, account: Account) -> AdminExpenseCategory:
    return {
        "id": cat.id,
        "xid": xid.encode(cat.id),
        "name": cat.name,
        "account_code": account.code,
        "account_name": account.name,
        "version": cat.version,
        "archived_at": setup_records.iso(cat.archived_at),
    }


async def modes_page(
    session: AsyncSession, company_id: int, page: Page, *, include_archived: bool
) -> tuple[int, list[AdminPaymentMode]]:
    total, rows = await setup_records.page_of(
        session,
        PaymentMode,
        company_id,
        page,
        include_archived=include_archived,
        order_by=(PaymentMode.code,),
    )
    ids = {r.account_id for r in rows}
    by_id = {a.id: a for a in await accounts.many(session, company_id, ids)}
    return total, [mode_view(r, by_id[r.account_id]) for r in rows]


async def mode_one(session: AsyncSession, company_id: int, mode_id: int) -> AdminPaymentMode:
    mode = await setup_records.find(
        session, PaymentMode, company_id, mode_id, "payment mode", lock=False
    )
    return mode_view(mode, await account_of(session, company_id, mode.account_id))


async def expense_categories_page(
    session: AsyncSession, company_id: int, page: Page, *, include_archived: bool
) -> tuple[int, list[AdminExpenseCategory]]:
    total, rows = await setup_records.page_of(
        session,
        ExpenseCategory,
        company_id,
        page,
        include_archived=include_archived,
        order_by=(ExpenseCategory.name,),
    )
    ids = {r.account_id for r in rows}
    by_id = {a.id: a for a in await accounts.many(session, company_id, ids)}
    return total, [expense_category_view(r, by_id[r.account_id]) for r in rows]


async def expense_category_one(
    session: AsyncSession, company_id: int, category_id: int
) -> AdminExpenseCategory:
    cat = await setup_records.find(
        session, ExpenseCategory, company_id, category_id, "expense category", lock=False
    )
    return expense_category_view(cat, await account_of(session, company_id, cat.account_id))


def _fields(view: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in view.items() if k not in ("id", "xid", "version")}


async def account_of(session: AsyncSession, company_id: int, account_id: int) -> Account:
    account = await accounts.by_id(session, company_id, account_id)
    assert account is not None, account_id  # a foreign key to the company's chart
    return account


async def _mode_account(
    session: AsyncSession,
    company_id: int,
    account_code: str | None,
    create_account: bool,
    name: str,
) -> Account | None:
    """The account a mode is to post to; None when the request names none."""
    if account_code is not None and create_account:
        raise invalid("account_code", "name an account or ask to create one, not both")
    if create_account:
        return await accounts.add_cash_account(session, company_id, name, "create_account")
    if account_code is None:
        return None
    account = await accounts.by_code(session, company_id, account_code)
    if account is None:
        raise invalid("account_code", f"unknown account {account_code!r}")
    if not accounts.is_cash_account(account):
        raise invalid(
            "account_code",
            f"account {account.code} is not a cash or bank account (a posting account "
            "under 11100 Cash & Bank Accounts)",
        )
    return account


async def _expense_account(
    session: AsyncSession,
    company_id: int,
    account_code: str | None,
    create_account: bool,
    name: str,
) -> Account | None:
    if account_code is not None and create_account:
        raise invalid("account_code", "name an account or ask to create one, not both")
    if create_account:
        return await accounts.add_expense_account(session, company_id, name, "create_account")
    if account_code is None:
        return None
    account = await accounts.by_code(session, company_id, account_code)
    if account is None:
        raise invalid("account_code", f"unknown account {account_code!r}")
    if not accounts.is_expense_account(account):
        raise invalid(
            "account_code", f"account {account.code} is not a 52xxx expense posting account"
        )
    return account


# --- payment modes -----------------------------------------------------------------


async def add_payment_mode(
    session: AsyncSession,
    company_id: int,
    actor_id: int | None,
    *,
    code: str,
    name: str,
    account_code: str | None,
    create_account: bool,
    currency: str | None = None,
) -> tuple[PaymentMode, Account]:
    """Codes are unique among all the company's modes, archived ones too: a payment
    names its mode by code, and a code must keep meaning one mode.

    ``currency``: a mode of foreign money (DESIGN §16), which gets an account of its
    own (``create_account``): an account holds one currency, so its balance in that
    currency is the sum of its lines' foreign amounts and can be revalued."""
    await reference_changed(session, company_id)
    if await setup_records.taken(
        session, PaymentMode, company_id, PaymentMode.code, code, archived_too=True
    ):
        raise duplicate("code", f"a payment mode with code {code!r} already exists")
    if await setup_records.taken(session, PaymentMode, company_id, PaymentMode.name, name):
        raise duplicate("name", f"a payment mode named {name!r} already exists")
    held = await _foreign_currency(session, company_id, currency, create_account)
    account = await _mode_account(session, company_id, account_code, create_account, name)
    if account is None:
        raise invalid("account_code", "name a cash or bank account, or set create_account")
    mode = PaymentMode(
        company_id=company_id, code=code, name=name, account_id=account.id, currency=held
    )
    session.add(mode)
    await session.flush()
    await setup_records.created(
        session,
        mode,
        actor_id=actor_id,
        entity_type="payment_mode",
        fields=_fields(mode_view(mode, account)),
    )
    return mode, account


async def _foreign_currency(
    session: AsyncSession, company_id: int, currency: str | None, create_account: bool
) -> str | None:
    """The currency a new mode holds: None for the base; an enabled foreign one, with
    an account made for it."""
    if currency is None or not currency.strip():
        return None
    code = rates.check_code("currency", currency)
    if code == (await rates.company(session, company_id)).base_currency:
        return None
    if not await rates.is_enabled(session, company_id, code):
        raise invalid("currency", f"{code} is not enabled for this company")
    if not create_account:
        raise invalid(
            "create_account", f"a mode holding {code} needs an account of its own: create one"
        )
    return code


async def edit_payment_mode(
    session: AsyncSession,
    company_id: int,
    actor_id: int | None,
    mode_id: int,
    expected_version: int | None,
    changes: Mapping[str, Any],
) -> tuple[PaymentMode, Account]:
    await reference_changed(session, company_id)
    mode = await setup_records.find(
        session, PaymentMode, company_id, mode_id, "payment mode", lock=True
    )
    setup_records.check_version(mode, expected_version, f"payment mode {mode.id}")
    if "name" in changes and changes["name"] is None:
        raise invalid("name", "must not be null")
    account = await account_of(session, company_id, mode.account_id)
    before = _fields(mode_view(mode, account))
    name = changes.get("name") or mode.name
    if await setup_records.taken(
        session, PaymentMode, company_id, PaymentMode.name, name, exclude_id=mode.id
    ):
        raise duplicate("name", f"a payment mode named {name!r} already exists")
    new_account = await _mode_account(
        session,
        company_id,
        changes.get("account_code"),
        bool(changes.get("create_account")),
        name,
    )
    wanted: dict[str, Any] = {"name": name}
    if new_account is not None and mode.currency is not None:
        raise invalid(
            "account_code", f"a mode holding {mode.currency} keeps the account made for it"
        )
    if new_account is not None:
        wanted["account_id"] = new_account.id
        account = new_account
    if setup_records.apply(mode, wanted):
        await setup_records.updated(
            session,
            mode,
            actor_id=actor_id,
            entity_type="payment_mode",
            before=before,
            after=_fields(mode_view(mode, account)),
        )
    return mode, account


async def archive_payment_mode(
    session: AsyncSession,
    company_id: int,
    actor_id: int | None,
    mode_id: int,
    expected_version: int | None,
) -> tuple[PaymentMode, Account]:
    await reference_changed(session, company_id)
    mode = await setup_records.find(
        session, PaymentMode, company_id, mode_id, "payment mode", lock=True
    )
    await setup_records.archive(
        session,
        mode,
        expected_version=expected_version,
        what=f"payment mode {mode.id}",
        actor_id=actor_id,
        entity_type="payment_mode",
    )
    return mode, await account_of(session, company_id, mode.account_id)


# --- expense categories --------------------------------------------------------------


async def add_expense_category(
    session: AsyncSession,
    company_id: int,
    actor_id: int | None,
    *,
    name: str,
    account_code: str | None,
    create_account: bool,
) -> tuple[ExpenseCategory, Account]:
    await reference_changed(session, company_id)
    if await setup_records.taken(session, ExpenseCategory, company_id, ExpenseCategory.name, name):
        raise duplicate("name", f"an expense category named {name!r} already exists")
    account = await _expense_account(session, company_id, account_code, create_account, name)
    if account is None:
        raise invalid("account_code", "name a 52xxx expense account, or set create_account")
    cat = ExpenseCategory(company_id=company_id, name=name, account_id=account.id)
    session.add(cat)
    await session.flush()
    await setup_records.created(
        session,
        cat,
        actor_id=actor_id,
        entity_type="expense_category",
        fields=_fields(expense_category_view(cat, account)),
    )
    return cat, account


async def edit_expense_category(
    session: AsyncSession,
    company_id: int,
    actor_id: int | None,
    category_id: int,
    expected_version: int | None,
    changes: Mapping[str, Any],
) -> tuple[ExpenseCategory, Account]:
    await reference_changed(session, company_id)
    cat = await setup_records.find(
        session, ExpenseCategory, company_id, category_id, "expense category", lock=True
    )
    setup_records.check_version(cat, expected_version, f"expense category {cat.id}")
    if "name" in changes and changes["name"] is None:
        raise invalid("name", "must not be null")
    account = await account_of(session, company_id, cat.account_id)
    before = _fields(expense_category_view(cat, account))
    name = changes.get("name") or cat.name
    if await setup_records.taken(
        session, ExpenseCategory, company_id, ExpenseCategory.name, name, exclude_id=cat.id
    ):
        raise duplicate("name", f"an expense category named {name!r} already exists")
    new_account = await _expense_account(
        session,
        company_id,
        changes.get("account_code"),
        bool(changes.get("create_account")),
        name,
    )
    wanted: dict[str, Any] = {"name": name}
    if new_account is not None:
        wanted["account_id"] = new_account.id
        account = new_account
    if setup_records.apply(cat, wanted):
        await setup_records.updated(
            session,
            cat,
            actor_id=actor_id,
            entity_type="expense_category",
            before=before,
            after=_fields(expense_category_view(cat, account)),
        )
    return cat, account


async def archive_expense_category(
    session: AsyncSession,
    company_id: int,
    actor_id: int | None,
    category_id: int,
    expected_version: int | None,
) -> tuple[ExpenseCategory, Account]:
    await reference_changed(session, company_id)
    cat = await setup_records.find(
        session, ExpenseCategory, company_id, category_id, "expense category", lock=True
    )
    await setup_records.archive(
        session,
        cat,
        expected_version=expected_version,
        what=f"expense category {cat.id}",
        actor_id=actor_id,
        entity_type="expense_category",
    )
    return cat, await account_of(session, company_id, cat.account_id)
