"""Customers and suppliers: setting them up, the till's reads, CSV import and export."""
