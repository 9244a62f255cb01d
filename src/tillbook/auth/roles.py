"""Who may do what in the back office: the one table of permissions per role, and the
warehouse scope of a staff member. Every admin route asks here (through
``api.admin.deps.Allowed`` or ``AdminContext.require``); no route decides by itself.

Roles and what they are for:

- ``owner``: everything, always company-wide (an owner has no warehouse scope).
- ``manager``: runs a branch: the catalog and its listings, prices, stock,
  customers and suppliers (their credit and opening balances too), reads the
  books, and voids a mistaken sale of the branch (``sales.void``: it reverses the
  sale's entry and refunds its tenders, so it is not a cashier's), takes returns
  (``sales.return``), records payments to suppliers and from customers, records
  expenses and approves and pays pending ones, moves money between the cash and
  bank accounts (``money.move``), and pairs and revokes the branch's registers
  (``registers.manage``), and buys for it: purchase orders and the deliveries
  received against them (``purchases.write``), all for their branch. Not staff, keys,
  webhooks, company settings (taxes, payment modes, expense categories,
  warehouses: they change the books of every branch) nor the audit trail.
- ``accountant``: reads the books, the audit trail and the catalog and parties;
  changes nothing (an accountant cannot change a price).
- ``cashier``: what a person at the till needs and no more: reads the catalog and
  parties, and creates or corrects customers' contact details (a till signs up a
  customer at the counter; the public API's ``POST /customers`` does the same),
  and takes a customer's payment at the counter (``payments.receive``: money in,
  against the customer's invoices, as the till's ``POST /payments`` does). Not
  suppliers (buying is the branch's business, and a supplier is someone the
  shop pays), nor what moves money: a customer's credit limit, any party's opening
  balance (posted to the books), an import file (its rows may carry opening
  balances). In the back office a cashier sees their own work (``sales.own``: the
  sales they made and the shifts they opened, not anyone else's, nor the
  dashboard) and looks up a product's stock in every branch (``stock.lookup``:
  quantities only) to send a customer where it is; never a cost, a stock value or
  a margin (``costs.read``), nor any setting.

What a page shows follows the same table: a purchase price, a batch's unit cost, a
movement's cost or a stock value is shown to a holder of ``costs.read`` only
(``shows_costs``), and a list of sales or shifts is narrowed to the staff member's
own work when they hold ``sales.own`` but not ``books.read`` (``own_work_only``).

The catalog: a product's definition (name, item code, barcodes, units, tax) is
shared by every branch, so defining or editing one is a company-wide
``catalog.write``, refused to a scoped manager even when the new product is listed
in their own warehouse only. A listing is one warehouse's: adding or editing it
needs ``catalog.write`` for that warehouse, its prices ``prices.write`` there, and
opening stock ``stock.write`` there. Units, categories and brands are
``catalog.write`` (company-wide); taxes, payment modes and expense categories
(which map to ledger accounts) and warehouses are ``settings.write``.

Warehouse scope: a manager, accountant or cashier may be limited to one warehouse
(``users.warehouse_id``); unscoped, they act on every warehouse of the company. The
scope holds for every action, by three rules:

1. A warehouse the request names (in its path, body or form, in a row of an import
   file, or as where an opening balance is posted) must be the scoped member's own,
   whatever the permission: naming another one is refused. A customer's or
   supplier's opening balance is posted in the scoped member's own warehouse when
   the request names none (an unscoped member's goes to the company's first
   warehouse, as before); a scoped member cannot post one in another branch's
   11500 / 21100, which they could not even read.
2. A *warehouse-bound* permission (``WAREHOUSE_BOUND``) held by a scoped staff member
   covers their warehouse's data only: an action on the whole company at once (a
   company-wide product definition, an unfiltered report, the audit trail) is
   refused.
3. A *company-wide* permission (``COMPANY_WIDE``: closing or reopening a period,
   settings, staff, keys, webhooks) changes every branch's books or access at once
   and is refused to any scoped staff member, even when the role holds it (a branch
   accountant cannot close the company's books).

The other permissions concern records that no warehouse owns (customers and
suppliers are shared by every branch, the catalog is read by all): the scope does
not narrow them as long as no warehouse is named. Every permission is in exactly
one of the three groups (``SHARED`` the third), so a new one must be placed. A
refusal is a 403 that names the permission; it is given before any record is looked
up, so it tells nothing about what exists. For an import file, the whole file is
refused naming the first line that names another warehouse, and nothing is written.
"""

from __future__ import annotations

from collections.abc import Iterable

from tillbook.errors import Forbidden

OWNER, MANAGER, ACCOUNTANT, CASHIER = "owner", "manager", "accountant", "cashier"
ROLES: tuple[str, ...] = (OWNER, MANAGER, ACCOUNTANT, CASHIER)

PERMISSIONS: dict[str, str] = {
    "books.read": "read the books: reports, journal, ledgers",
    "catalog.read": "read products, listings, categories, brands, units",
    "catalog.write": "create and edit products, listings, categories, brands, units",
    "prices.write": "change sales and purchase prices",
    "parties.read": "read customers and suppliers",
    "parties.write": "create, edit and archive customers (their contact details)",
    "suppliers.write": "create, edit and archive suppliers",
    "parties.credit": "a customer's credit limit, a customer's or supplier's opening "
    "balance (posted to the books), and customer or supplier import files",
    "stock.write": "adjust stock, opening stock, transfers",
    "purchases.write": "purchase orders (draft, order, close) and deliveries received "
    "against them; paying at receipt also needs payments.make",
    "sales.void": "void a mistaken sale (stock back, a reversing entry, tenders refunded)",
    "sales.return": "take goods back from a sale and refund them (to a tender or the "
    "customer's account)",
    "payments.receive": "record a customer's payment against their invoices",
    "payments.make": "record a payment to a supplier against their invoices",
    "expenses.write": "record an expense, paid now or pending approval",
    "expenses.approve": "approve and pay a pending expense",
    "money.move": "move money between cash and bank accounts (takings paid into the bank)",
    "settings.write": "company and branch settings: taxes, payment modes, expense "
    "categories, warehouses, receipts",
    "staff.manage": "create, edit and archive staff members",
    "keys.manage": "create, reveal, rotate and revoke API keys",
    "webhooks.manage": "read and change webhooks and their deliveries",
    "registers.manage": "pair, list and revoke a branch's registers (DESIGN.md §15)",
    "audit.read": "read the audit trail",
    "sales.own": "read the sales one made and the shifts one opened (a cashier's own work)",
    "stock.lookup": "see a product's stock in every branch (quantities only, no costs)",
    "costs.read": "see costs: purchase prices, batch costs, stock values and margins",
    "books.close": "close the books through a day (month and year end)",
    "books.reopen": "reopen closed periods (an owner's decision: it changes final figures)",
}

# Permissions whose records belong to one warehouse: a scoped staff member holds
# them for that warehouse only.
WAREHOUSE_BOUND: frozenset[str] = frozenset(
    {
        "books.read",
        "catalog.write",
        "prices.write",
        "stock.write",
        "purchases.write",
        "sales.void",
        "sales.return",
        "payments.receive",
        "payments.make",
        "expenses.write",
        "expenses.approve",
        "money.move",
        "audit.read",
        "registers.manage",
        "sales.own",
        "costs.read",
    }
)

# Permissions that act on the whole company at once: never held by a scoped member.
COMPANY_WIDE: frozenset[str] = frozenset(
    {
        "books.close",
        "books.reopen",
        "settings.write",
        "staff.manage",
        "keys.manage",
        "webhooks.manage",
    }
)
# Permissions over records shared by every warehouse: the scope narrows them only
# when a request names a warehouse (rule 1 above).
SHARED: frozenset[str] = frozenset(PERMISSIONS) - WAREHOUSE_BOUND - COMPANY_WIDE

GRANTS: dict[str, frozenset[str]] = {
    OWNER: frozenset(PERMISSIONS),
    MANAGER: frozenset(
        {
            "books.read",
            "catalog.read",
            "catalog.write",
            "prices.write",
            "parties.read",
            "parties.write",
            "suppliers.write",
            "parties.credit",
            "stock.write",
            "purchases.write",
            "sales.void",
            "registers.manage",
            "sales.return",
            "payments.receive",
            "payments.make",
            "expenses.write",
            "expenses.approve",
            "money.move",
            "stock.lookup",
            "costs.read",
        }
    ),
    ACCOUNTANT: frozenset(
        {
            "books.read",
            "books.close",
            "catalog.read",
            "parties.read",
            "audit.read",
            "stock.lookup",
            "costs.read",
        }
    ),
    CASHIER: frozenset(
        {
            "catalog.read",
            "parties.read",
            "parties.write",
            "payments.receive",
            "sales.own",
            "stock.lookup",
        }
    ),
}
# Roles that may be limited to one warehouse.
SCOPABLE: frozenset[str] = frozenset({MANAGER, ACCOUNTANT, CASHIER})


def known(permission: str) -> str:
    """The permission, checked against the table (a typo in a route fails at import)."""
    if permission not in PERMISSIONS:
        raise ValueError(f"unknown permission {permission!r}; see tillbook.auth.roles")
    return permission


def granted(role: str | None, permission: str) -> bool:
    return permission in GRANTS.get(role or "", frozenset())


def roles_with(permission: str) -> list[str]:
    return [role for role in ROLES if permission in GRANTS[role]]


def check(
    role: str | None,
    scope: int | None,
    permission: str,
    warehouse_id: int | None = None,
) -> None:
    """Refuse (403) unless ``role`` holds ``permission`` for ``warehouse_id`` (None: a
    company-wide action). ``scope`` is the staff member's warehouse, None for all."""
    known(permission)
    if not granted(role, permission):
        holders = ", ".join(roles_with(permission))
        raise Forbidden(
            f"the {role or 'no'} role lacks the permission {permission!r} "
            f"({PERMISSIONS[permission]}); roles that have it: {holders}"
        )
    if scope is None:
        return
    if permission in COMPANY_WIDE:
        raise Forbidden(
            f"the permission {permission!r} acts on every warehouse of the company at "
            f"once; this staff member is limited to warehouse {scope}, and it needs an "
            "unscoped staff member"
        )
    if warehouse_id is not None and warehouse_id != scope:
        raise Forbidden(
            f"the permission {permission!r} is limited to warehouse {scope} for this staff "
            f"member (asked for warehouse {warehouse_id})"
        )
    if warehouse_id is None and permission in WAREHOUSE_BOUND:
        raise Forbidden(
            f"the permission {permission!r} is limited to warehouse {scope} for this staff "
            "member; a company-wide request needs an unscoped staff member"
        )


def narrowed(
    role: str | None, scope: int | None, permission: str, warehouse_id: int | None
) -> int | None:
    """The warehouse an action that may leave it unnamed covers: a report of the
    company or one warehouse, where an opening balance is posted. A scoped staff
    member naming none gets their own warehouse; naming another one is refused like
    ``check``. None for an unscoped member who named none (the whole company, or the
    service's default)."""
    if scope is not None and warehouse_id is None:
        warehouse_id = scope
    check(role, scope, permission, warehouse_id)
    return warehouse_id


def _holds(role: str | None, scope: int | None, permission: str, warehouse_id: int | None) -> bool:
    try:
        check(role, scope, permission, warehouse_id if warehouse_id is not None else scope)
    except Forbidden:
        return False
    return True


def shows_costs(role: str | None, scope: int | None, warehouse_id: int | None = None) -> bool:
    """Whether a page may show costs (purchase prices, batch costs, stock values,
    margins) of ``warehouse_id`` (None: the staff member's branches)."""
    return _holds(role, scope, "costs.read", warehouse_id)


def own_work_only(role: str | None, scope: int | None, warehouse_id: int | None = None) -> bool:
    """Whether a list of sales or shifts (of ``warehouse_id``, None: the staff
    member's branches) is narrowed to the staff member's own: False for a reader of
    the books, True for a holder of ``sales.own`` only; 403 for anyone else."""
    if _holds(role, scope, "books.read", warehouse_id):
        return False
    if _holds(role, scope, "sales.own", warehouse_id):
        return True
    check(role, scope, "books.read", warehouse_id if warehouse_id is not None else scope)
    return False  # not reached: check refused


def may_list(
    role: str | None, scope: int | None, warehouse_id: int, *, opening_stock: bool
) -> None:
    """A new listing of a product in ``warehouse_id`` (with a product or on its own):
    the catalog's and the prices' permission there, and the stock's when it brings
    opening stock. The same rule for the admin API and the back office's forms."""
    check(role, scope, "catalog.write", warehouse_id)
    check(role, scope, "prices.write", warehouse_id)
    if opening_stock:
        check(role, scope, "stock.write", warehouse_id)


def table() -> Iterable[tuple[str, list[str]]]:
    """(permission, roles holding it), in the table's order: for documentation."""
    return ((p, roles_with(p)) for p in PERMISSIONS)
