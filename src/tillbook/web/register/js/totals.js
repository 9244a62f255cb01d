// Sale totals by DESIGN §3, exactly as the server prices a sale (kit/money.py
// line_amounts, orders/sales.py price_sale): ROUND_HALF_UP to the cent per line.
//
//   line gross = round(quantity × unit_price × (1 − discount_rate/100), 2)
//   exclusive tax: tax = round(gross × rate/100, 2), net = gross
//   inclusive tax: tax = round(gross × rate/(100+rate), 2), net = gross − tax
//   subtotal = Σ net, tax_amount = Σ tax, total = subtotal + tax + shipping − discount
//
// All arithmetic is on BigInt integers: quantity, price and rates at 4 places,
// money at 2, so every intermediate value is exact and only the one rounding the
// server does is done here. A pure module: no DOM, no storage (tested against
// POST /sales/preview over random baskets).

import { divRound, parse, format, pow10 } from "./dec.js";
import { applyPromotions } from "./promotions.js";

const E4 = pow10(4);
const HUNDRED_E4 = 100n * E4; // 100 at rate scale

// A line on the price as given, after its own discount rate, in BigInt cents
// (kit/money.py line_base): what a promotion's discount is worked out on.
export function lineBase({ quantity, unit_price, discount_rate = 0 }) {
  const q = parse(quantity, 4);
  const p = parse(unit_price, 4);
  const d = parse(discount_rate || 0, 4);
  // q·p at scale 8; (1 − d/100) = (10^6 − d)/10^6 with d at scale 4; so
  // q·p·(10^6 − d) is at scale 14, and in cents one divides by 10^12.
  return divRound(q * p * (HUNDRED_E4 - d), pow10(12));
}

// One line. quantity, unit_price, discount_rate, tax_rate: decimal text or numbers
// (at most 4 places); tax_inclusive: boolean; off: what a promotion takes off the
// line (BigInt cents, before tax). Answers BigInt cents.
export function lineAmounts({ quantity, unit_price, discount_rate = 0, tax_rate = 0, tax_inclusive = false, off = 0n }) {
  const q = parse(quantity, 4);
  const p = parse(unit_price, 4);
  const r = parse(tax_rate || 0, 4);
  const listed = divRound(q * p, pow10(6)); // money(quantity × unit_price)
  const gross = lineBase({ quantity, unit_price, discount_rate }) - off;
  let tax = 0n;
  let net = gross;
  let total = gross;
  if (r !== 0n) {
    if (tax_inclusive) {
      // gross × r/(100 + r): r at scale 4, so r_i / (100·10^4 + r_i)
      tax = divRound(gross * r, HUNDRED_E4 + r);
      net = gross - tax;
    } else {
      tax = divRound(gross * r, HUNDRED_E4);
      total = gross + tax;
    }
  }
  // What the discount rate took off (on the price as given: tax included when the
  // tax is inclusive), as the preview reports it.
  const discount = listed - (r !== 0n && tax_inclusive ? gross : net) - off;
  return { net, tax, total, discount, listed };
}

// A basket: {lines: [{quantity, unit_price, discount_rate, tax_rate, tax_inclusive,
// product_id, categories (its category and those above), brand_id}], discount,
// shipping, rules (the promotions in
// force, promotions.js)}. Answers BigInt cents and each line's amounts, with the
// promotion that priced it ({promotion_id, name, off}) or null.
export function saleTotals({ lines, discount = 0, shipping = 0, rules = [] }) {
  const applied = rules.length
    ? applyPromotions(
        rules,
        lines.map((l, index) => ({
          index,
          product_id: l.product_id,
          categories: l.categories || [],
          brand_id: l.brand_id ?? null,
          quantity: l.quantity,
          amount: lineBase(l),
        })),
      )
    : new Map();
  const priced = lines.map((l, i) => {
    const promotion = applied.get(i) || null;
    return { ...lineAmounts({ ...l, off: promotion ? promotion.off : 0n }), promotion };
  });
  let subtotal = 0n;
  let tax = 0n;
  for (const l of priced) {
    subtotal += l.net;
    tax += l.tax;
  }
  const ship = parse(shipping || 0, 2);
  const off = parse(discount || 0, 2);
  const gross = subtotal + tax + ship;
  return { lines: priced, subtotal, tax, shipping: ship, discount: off, gross, total: gross - off, overDiscount: off > gross };
}

// The same figures as decimal strings, as POST /sales/preview answers them.
export function asText(t) {
  return {
    items: t.lines.map((l) => ({
      net: format(l.net, 2),
      tax: format(l.tax, 2),
      discount: format(l.discount, 2),
      total: format(l.total, 2),
      promotion_id: l.promotion ? l.promotion.promotion_id : null,
      promotion_discount: format(l.promotion ? l.promotion.off : 0n, 2),
    })),
    subtotal: format(t.subtotal, 2),
    tax_amount: format(t.tax, 2),
    discount: format(t.discount, 2),
    shipping: format(t.shipping, 2),
    total: format(t.total, 2),
  };
}
