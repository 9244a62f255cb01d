"""Posting rules given exactly the figures they name (``ledger.service.build_lines``)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from tillbook.ledger.rules import RULES, figure_names
from tillbook.ledger.service import build_lines

D = Decimal


def test_every_rule_needs_exactly_its_figures() -> None:
    for rule in RULES:
        names = figure_names(rule)
        figures: dict[str, object] = {
            name: ([("11101", D("1.00"))] if any(
                leg.amount == name and leg.account is None for leg in RULES[rule]
            ) else D("1.00"))
            for name in names
        }  # fmt: skip
        build_lines(rule, figures, party_id=None)  # type: ignore[arg-type]
        for missing in names:
            short = {k: v for k, v in figures.items() if k != missing}
            with pytest.raises(ValueError, match="missing"):
                build_lines(rule, short, party_id=None)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="unknown"):
            build_lines(rule, {**figures, "cots": D("1")}, party_id=None)  # type: ignore[arg-type]


def test_a_misspelled_figure_cannot_drop_cost() -> None:
    """The failure this guards against: COGS silently left out of a sale."""
    figures = {
        "due": D("0"),
        "tenders": [("11101", D("10.00"))],
        "discount": D("0"),
        "promotions": D("0"),
        "cots": D("4.00"),
        "subtotal": D("10.00"),
        "tax": D("0"),
        "shipping": D("0"),
        "points": D("0"),
    }
    with pytest.raises(ValueError, match=r"missing \['cost'\], unknown \['cots'\]"):
        build_lines("sale", figures, party_id=None)
