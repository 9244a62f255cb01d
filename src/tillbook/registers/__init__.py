"""Registers: browser tills paired to a branch, with their own credential (DESIGN.md §15)."""
