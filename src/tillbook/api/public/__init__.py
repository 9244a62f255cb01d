"""The public v1 API: thin routers, one service call each."""

from tillbook.api.public import (
    adjustments,
    catalog,
    gift_cards,
    loyalty,
    parties,
    payments,
    promotions,
    purchases,
    reference,
    registers,
    returns,
    sales,
    shifts,
    terminals,
    transfers,
)

# Every router of the public API, in the order they are matched
# (``api.routing.mount``).
ROUTERS = (
    catalog.router,
    parties.router,
    reference.router,
    sales.router,
    purchases.router,
    adjustments.router,
    payments.router,
    returns.router,
    terminals.router,
    shifts.router,
    transfers.router,
    registers.router,
    gift_cards.router,
    promotions.router,
    loyalty.router,
)
