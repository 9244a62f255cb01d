"""The back-office API (``/api/v1/admin``): staff sessions, staff members, the audit
trail, webhook management, the reports, the company's catalog (products and their
listings), reference data (units, categories, brands, taxes, payment modes, expense
categories, warehouses), customers and suppliers, money in and out (payments,
expenses and their approval, moves between cash and bank), stocktakes, purchase
orders, batch price changes, the company's currencies and exchange rates, gift cards
and loyalty points. Thin routers,
one service call each; every route names its permission with ``deps.Allowed``
(``auth/roles.py``) and
every POST runs through ``api.idempotent.run_admin_write`` (or ``run_admin_unit``)."""

from tillbook.api.admin import (
    audit,
    brands,
    catalog_import_export,
    categories,
    currencies,
    expense_categories,
    gift_cards,
    ledgers,
    loyalty,
    money,
    parties,
    payment_modes,
    periods,
    price_changes,
    products,
    promotions,
    purchase_orders,
    registers,
    reports,
    session,
    staff,
    stock_counts,
    taxes,
    units,
    warehouses,
    webhooks,
)

# Every router of the back-office API, in the order they are matched
# (``api.routing.mount``).
ROUTERS = (
    session.router,
    webhooks.router,
    reports.router,
    staff.router,
    registers.router,
    audit.router,
    ledgers.router,
    periods.router,
    products.router,
    catalog_import_export.router,
    parties.router,
    money.router,
    stock_counts.router,
    purchase_orders.router,
    currencies.router,
    price_changes.router,
    gift_cards.router,
    promotions.router,
    loyalty.router,
    units.router,
    categories.router,
    brands.router,
    taxes.router,
    payment_modes.router,
    expense_categories.router,
    warehouses.router,
)
