"""tillbook: multi-tenant retail point-of-sale, inventory and double-entry accounting."""

__version__ = "0.1.0"
