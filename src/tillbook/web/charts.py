"""Bar charts drawn on the server as inline SVG (no script): a labelled value axis
with round ticks, a labelled category axis, a zero line, and each bar's value
written on it, plus a table of the same figures for screen readers. One shape for
every chart of the back office (the dashboard's sales per day, profit and loss by
month), drawn by ``templates/_chart.html``."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

WIDTH, HEIGHT = 640, 240
LEFT, RIGHT, TOP, BOTTOM = 64, 8, 18, 44  # room for the value axis, labels and titles


def _nice(top: Decimal) -> Decimal:
    """The smallest of 1, 2, 2.5, 5 times a power of ten at or above ``top``."""
    if top <= 0:
        return Decimal(1)
    power = Decimal(10) ** (top.adjusted())
    for step in (1, 2, Decimal("2.5"), 5, 10):
        if top <= power * step:
            return power * step
    return power * 10


def short_amount(value: Decimal) -> str:
    """A value label that fits above a bar: 950, 1.2k, 3.4M."""
    size = abs(value)
    for limit, suffix in ((Decimal(1_000_000), "M"), (Decimal(1_000), "k")):
        if size >= limit:
            return f"{value / limit:.1f}".rstrip("0").rstrip(".") + suffix
    return f"{value:.0f}" if size >= 100 else f"{value:.2f}".rstrip("0").rstrip(".")


def bar_chart(
    points: list[tuple[str, str, Decimal]],
    *,
    title: str,
    x_label: str,
    y_label: str,
    label_every: int = 1,
) -> dict[str, Any]:
    """``points``: (full label, axis label, value). Bars rise from zero, a negative
    one (a loss) hangs below it. The category axis shows every ``label_every``-th
    label (30 days do not fit under 640 units); every bar carries its value."""
    values = [v for _l, _s, v in points]
    high = _nice(max([v for v in values if v > 0], default=Decimal(0)))
    lowest = min(values, default=Decimal(0))
    low = _nice(-lowest) if lowest < 0 else Decimal(0)
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    span = high + low

    def y(value: Decimal) -> float:
        return round(TOP + float((high - value) / span) * plot_h, 1)

    zero = y(Decimal(0))
    marks = [high, high / 2, Decimal(0)] + ([-low / 2, -low] if low else [])
    ticks = [{"y": y(v), "label": short_amount(v)} for v in marks]
    step = plot_w / max(len(points), 1)
    bars = []
    for i, (label, short, value) in enumerate(points):
        top_y = y(max(value, Decimal(0)))
        height = round(abs(y(value) - zero), 1)
        cx = round(LEFT + i * step + step / 2, 1)
        bars.append(
            {
                "x": round(LEFT + i * step + step * 0.1, 1),
                "y": top_y,
                "w": round(step * 0.8, 1),
                "h": height,
                "cx": cx,
                "label": label,
                "short": short if i % label_every == 0 else "",
                "value": value,
                "value_text": short_amount(value) if value else "",
                "value_y": round(top_y - 3 if value >= 0 else y(value) + 10, 1),
                "loss": value < 0,
            }
        )
    return {
        "title": title,
        "x_label": x_label,
        "y_label": y_label,
        "width": WIDTH,
        "height": HEIGHT,
        "left": LEFT,
        "right": WIDTH - RIGHT,
        "top": TOP,
        "bottom": HEIGHT - BOTTOM,
        "zero": zero,
        "ticks": ticks,
        "bars": bars,
        "small": len(points) > 16,  # smaller value labels for many bars
        "highest": max(values, default=Decimal(0)),
    }
