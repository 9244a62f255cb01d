"""The permission table and warehouse scope of ``auth/roles.py``, as a route asks
them through ``AdminContext`` (routes for catalog, prices and stock are checked here
before they exist, so that their authors find the rules already fixed)."""

from __future__ import annotations

import datetime as dt
import re

import pytest

from tillbook.auth import roles
from tillbook.auth.admin import AdminContext
from tillbook.errors import Forbidden

EXPECTED = {
    # permission: roles holding it, as docs/operators/staff.md and the report document them
    "books.read": {"owner", "manager", "accountant"},
    "catalog.read": {"owner", "manager", "accountant", "cashier"},
    "catalog.write": {"owner", "manager"},
    "prices.write": {"owner", "manager"},
    "parties.read": {"owner", "manager", "accountant", "cashier"},
    "parties.write": {"owner", "manager", "cashier"},
    "suppliers.write": {"owner", "manager"},
    "parties.credit": {"owner", "manager"},
    "stock.write": {"owner", "manager"},
    "purchases.write": {"owner", "manager"},
    "sales.void": {"owner", "manager"},
    "sales.return": {"owner", "manager"},
    "payments.receive": {"owner", "manager", "cashier"},
    "payments.make": {"owner", "manager"},
    "expenses.write": {"owner", "manager"},
    "expenses.approve": {"owner", "manager"},
    "money.move": {"owner", "manager"},
    "settings.write": {"owner"},
    "staff.manage": {"owner"},
    "keys.manage": {"owner"},
    "webhooks.manage": {"owner"},
    "audit.read": {"owner", "accountant"},
    "registers.manage": {"owner", "manager"},
    "sales.own": {"owner", "cashier"},
    "stock.lookup": {"owner", "manager", "accountant", "cashier"},
    "costs.read": {"owner", "manager", "accountant"},
    "books.close": {"owner", "accountant"},
    "books.reopen": {"owner"},
}


def ctx(role: str | None, warehouse_id: int | None = None) -> AdminContext:
    return AdminContext(
        session_id=1,
        company_id=1,
        user_id=1,
        expires_at=dt.datetime.now(dt.UTC),
        role=role,
        warehouse_id=warehouse_id,
    )


def test_the_table() -> None:
    assert {p: set(r) for p, r in roles.table()} == EXPECTED


@pytest.mark.parametrize("role", [*roles.ROLES, None, "admin"])
@pytest.mark.parametrize("permission", sorted(EXPECTED))
def test_each_role_and_permission(role: str | None, permission: str) -> None:
    staff = ctx(role)
    if role in EXPECTED[permission]:
        staff.require(permission)
        assert staff.can(permission)
    else:
        with pytest.raises(Forbidden, match=re.escape(repr(permission))):
            staff.require(permission)
        assert not staff.can(permission)


def test_an_accountant_cannot_change_a_price() -> None:
    message = "the accountant role lacks the permission 'prices.write'"
    with pytest.raises(Forbidden, match=re.escape(message)):
        ctx("accountant").require("prices.write", warehouse_id=3)


def test_a_branch_manager_changes_their_branch_only() -> None:
    manager = ctx("manager", warehouse_id=3)
    manager.require("prices.write", warehouse_id=3)
    manager.require("catalog.write", warehouse_id=3)
    manager.require("stock.write", warehouse_id=3)
    for permission in ("prices.write", "catalog.write", "stock.write", "books.read"):
        with pytest.raises(Forbidden, match="limited to warehouse 3"):
            manager.require(permission, warehouse_id=4)
        with pytest.raises(Forbidden, match="company-wide"):
            manager.require(permission)  # the company-wide product, an unfiltered report
    # Customers and suppliers belong to no warehouse ...
    manager.require("parties.write")
    manager.require("parties.credit", warehouse_id=3)
    # ... but a warehouse named (an opening balance's) is in the scope, whatever the
    # permission, and one named by none is their own.
    for permission in ("parties.write", "parties.credit", "suppliers.write"):
        with pytest.raises(Forbidden, match="limited to warehouse 3"):
            manager.require(permission, warehouse_id=4)
    assert manager.warehouse_for("parties.credit", None) == 3
    assert ctx("manager").warehouse_for("parties.credit", None) is None
    # An unscoped manager acts on every warehouse.
    ctx("manager").require("prices.write", warehouse_id=4)
    ctx("manager").require("catalog.write")


def test_every_permission_is_placed_in_one_scope_group() -> None:
    groups = (roles.WAREHOUSE_BOUND, roles.COMPANY_WIDE, roles.SHARED)
    assert set().union(*groups) == set(roles.PERMISSIONS)
    assert sum(len(g) for g in groups) == len(roles.PERMISSIONS)


@pytest.mark.parametrize("permission", sorted(roles.COMPANY_WIDE))
def test_company_wide_actions_need_an_unscoped_member(permission: str) -> None:
    """A branch's accountant may not close the company's books, although the role
    closes them: a scoped member holds no company-wide permission."""
    for role in roles.SCOPABLE:
        staff = ctx(role, warehouse_id=3)
        with pytest.raises(Forbidden, match=re.escape(repr(permission))):
            staff.require(permission)
        with pytest.raises(Forbidden):
            staff.require(permission, warehouse_id=3)
        assert not staff.can(permission)
        assert ctx(role).can(permission) == (role in EXPECTED[permission])
    ctx("accountant").require("books.close")
    with pytest.raises(Forbidden, match="unscoped staff member"):
        ctx("accountant", warehouse_id=3).require("books.close")


def test_reads_narrow_to_the_scope() -> None:
    scoped = ctx("accountant", warehouse_id=5)
    assert scoped.warehouse_for("books.read", None) == 5
    assert scoped.warehouse_for("books.read", 5) == 5
    with pytest.raises(Forbidden):
        scoped.warehouse_for("books.read", 6)
    assert ctx("accountant").warehouse_for("books.read", None) is None
    assert ctx("owner").warehouse_for("books.read", 6) == 6
    with pytest.raises(Forbidden):
        ctx("cashier", warehouse_id=5).warehouse_for("books.read", None)


def test_a_typo_in_a_permission_fails_at_once() -> None:
    from tillbook.api.admin.deps import Allowed

    with pytest.raises(ValueError, match="unknown permission"):
        Allowed("webhook.manage")
    with pytest.raises(ValueError):
        ctx("owner").require("everything")
