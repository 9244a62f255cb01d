"""All tables, imported in one place so metadata is complete for Alembic."""

from tillbook.models.audit import AuditEvent
from tillbook.models.auth import AdminSession, ApiKey, IdempotencyRecord, SeenSignature
from tillbook.models.base import Base
from tillbook.models.catalog import (
    Brand,
    Category,
    Listing,
    Product,
    ProductBarcode,
    ProductUnit,
    Tax,
    Unit,
)
from tillbook.models.currency import CompanyCurrency, ExchangeRate
from tillbook.models.events import (
    DeliveryAttempt,
    OutboxEvent,
    TerminalCallback,
    TerminalProvider,
    Webhook,
    WebhookDelivery,
)
from tillbook.models.giftcards import GiftCard, GiftCardMovement
from tillbook.models.inventory import (
    StockAdjustment,
    StockAlert,
    StockBatch,
    StockCount,
    StockCountLine,
    StockMovement,
    StockTransfer,
    StockTransferLine,
)
from tillbook.models.ledger import (
    Account,
    FailedTransaction,
    JournalEntry,
    JournalLine,
    LedgerPeriod,
    LedgerRollup,
    PartyRollup,
)
from tillbook.models.loyalty import LoyaltyAccount, LoyaltyMovement, LoyaltyProgramme
from tillbook.models.orders import InvoiceCounter, Order, OrderItem
from tillbook.models.payments import (
    Expense,
    ExpenseCategory,
    Payment,
    PaymentAllocation,
    PaymentMode,
    PriceAdjustmentBatch,
    PriceHistory,
)
from tillbook.models.promotions import Promotion
from tillbook.models.purchasing import PurchaseOrder, PurchaseOrderLine, PurchaseOrderReceipt
from tillbook.models.registers import Register
from tillbook.models.shifts import Shift, ShiftCash, ShiftCount
from tillbook.models.tenancy import Company, StaffLogin, User, Warehouse

__all__ = [
    "Account",
    "AdminSession",
    "ApiKey",
    "AuditEvent",
    "Base",
    "Brand",
    "Category",
    "Company",
    "CompanyCurrency",
    "DeliveryAttempt",
    "ExchangeRate",
    "Expense",
    "ExpenseCategory",
    "FailedTransaction",
    "GiftCard",
    "GiftCardMovement",
    "IdempotencyRecord",
    "InvoiceCounter",
    "JournalEntry",
    "JournalLine",
    "LedgerPeriod",
    "LedgerRollup",
    "Listing",
    "LoyaltyAccount",
    "LoyaltyMovement",
    "LoyaltyProgramme",
    "Order",
    "OrderItem",
    "OutboxEvent",
    "PartyRollup",
    "Payment",
    "PaymentAllocation",
    "PaymentMode",
    "PriceAdjustmentBatch",
    "PriceHistory",
    "Product",
    "ProductBarcode",
    "ProductUnit",
    "Promotion",
    "PurchaseOrder",
    "PurchaseOrderLine",
    "PurchaseOrderReceipt",
    "Register",
    "SeenSignature",
    "Shift",
    "ShiftCash",
    "ShiftCount",
    "StaffLogin",
    "StockAdjustment",
    "StockAlert",
    "StockBatch",
    "StockCount",
    "StockCountLine",
    "StockMovement",
    "StockTransfer",
    "StockTransferLine",
    "Tax",
    "TerminalCallback",
    "TerminalProvider",
    "Unit",
    "User",
    "Warehouse",
    "Webhook",
    "WebhookDelivery",
]
