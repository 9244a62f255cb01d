"""The audit trail of back-office changes."""
