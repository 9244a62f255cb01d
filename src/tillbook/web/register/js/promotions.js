// The promotion engine of DESIGN §18, exactly as the server runs it
// (orders/promotions.py): which promotions are in force at a moment, and what each
// takes off which line. A pure module: no DOM, no storage. Tested against
// POST /sales/preview over random baskets and promotions.
//
// Every figure is an exact fraction of BigInts; the one rounding is half up to the
// cent, as the server's. A line's amount (`amount`, BigInt cents) is the line on the
// price as given after its own discount rate (totals.js lineBase).

import { parse, pow10 } from "./dec.js";

const E4 = pow10(4);

// --- exact fractions: [numerator, denominator], denominator > 0 -------------------
const frac = (n, d = 1n) => [n, d];
const dec = (text) => frac(parse(text, 4), E4); // rule figures carry at most 4 places
const cents = (a) => frac(a, 100n);
const mul = (a, b) => frac(a[0] * b[0], a[1] * b[1]);
const div = (a, b) => (b[0] < 0n ? frac(-a[0] * b[1], -a[1] * b[0]) : frac(a[0] * b[1], a[1] * b[0]));
const add = (a, b) => frac(a[0] * b[1] + b[0] * a[1], a[1] * b[1]);
const sub = (a, b) => frac(a[0] * b[1] - b[0] * a[1], a[1] * b[1]);
const cmp = (a, b) => {
  const l = a[0] * b[1];
  const r = b[0] * a[1];
  return l < r ? -1 : l > r ? 1 : 0;
};
const floor = (a) => {
  const q = a[0] / a[1];
  return a[0] < 0n && q * a[1] !== a[0] ? q - 1n : q;
};
// A fraction of money (≥ 0) rounded half up to BigInt cents.
const toCents = (a) => floor(add(mul(a, frac(100n)), frac(1n, 2n)));
const minBig = (a, b) => (a < b ? a : b);

// --- in force ----------------------------------------------------------------------

// The local date ("YYYY-MM-DD"), ISO weekday (1–7) and time ("HH:MM:SS") of `at` in
// `zone` (an IANA name; the device's own when absent).
export function localParts(at, zone) {
  const f = new Intl.DateTimeFormat("en-GB", {
    timeZone: zone || undefined,
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
    weekday: "short",
    hourCycle: "h23",
  });
  const p = Object.fromEntries(f.formatToParts(at).map((x) => [x.type, x.value]));
  const weekday = { Mon: 1, Tue: 2, Wed: 3, Thu: 4, Fri: 5, Sat: 6, Sun: 7 }[p.weekday];
  return { date: `${p.year}-${p.month}-${p.day}`, weekday, time: `${p.hour}:${p.minute}:${p.second}` };
}

// The promotion's state at `at` (a Date): the last change at or before it; before
// the first, the first.
export function stateAt(rule, at) {
  const states = rule.states || [];
  let current = states.length ? states[0][1] : "active";
  for (const [when, status] of states) {
    if (new Date(when).getTime() <= at.getTime()) current = status;
    else break;
  }
  return current;
}

export function inForce(rule, warehouseId, at, zone) {
  if (rule.warehouse_id != null && rule.warehouse_id !== warehouseId) return false;
  const local = localParts(at, zone);
  if (local.date < rule.starts_on || (rule.ends_on && local.date > rule.ends_on)) return false;
  if (!(rule.weekdays || []).includes(local.weekday)) return false;
  if (rule.from_time && rule.until_time) {
    const from = rule.from_time.length === 5 ? `${rule.from_time}:00` : rule.from_time;
    const until = rule.until_time.length === 5 ? `${rule.until_time}:00` : rule.until_time;
    if (!(from <= local.time && local.time < until)) return false;
  }
  return stateAt(rule, at) === "active";
}

// --- the rules ---------------------------------------------------------------------

function eligible(rule, item) {
  if (rule.applies_to === "all") return true;
  const targets = rule.targets || [];
  // A product's category and every one above it: "Drinks" covers "Drinks › Juice".
  if (rule.applies_to === "categories") return (item.categories || []).some((c) => targets.includes(c));
  const ref = { products: item.product_id, brands: item.brand_id }[rule.applies_to];
  return ref != null && targets.includes(ref);
}

// {offs: Map(index -> BigInt cents), counted: Set(index)}
function offsOf(rule, pool) {
  const p = rule.rule || {};
  const all = new Set(pool.map((i) => i.index));
  if (rule.kind === "percent_off") {
    const share = div(dec(p.percent), frac(100n));
    return { offs: new Map(pool.map((i) => [i.index, toCents(mul(cents(i.amount), share))])), counted: all };
  }
  if (rule.kind === "amount_off") {
    const each = dec(p.amount);
    return { offs: new Map(pool.map((i) => [i.index, minBig(i.amount, toCents(mul(each, dec(i.quantity))))])), counted: all };
  }
  if (rule.kind === "quantity_break") {
    const held = pool.reduce((s, i) => add(s, dec(i.quantity)), frac(0n));
    const reached = (p.tiers || []).filter((t) => cmp(dec(t.min_quantity), held) <= 0);
    if (!reached.length) return { offs: new Map(), counted: new Set() };
    const tier = reached.reduce((a, b) => (cmp(dec(b.min_quantity), dec(a.min_quantity)) > 0 ? b : a));
    const share = div(dec(tier.percent), frac(100n));
    return { offs: new Map(pool.map((i) => [i.index, toCents(mul(cents(i.amount), share))])), counted: all };
  }
  if (rule.kind === "buy_x_get_y") return buyGet(p, pool);
  if (rule.kind === "bundle") return bundle(p, pool);
  return { offs: new Map(), counted: new Set() };
}

function buyGet(p, pool) {
  const whole = pool.filter((i) => cmp(dec(i.quantity), frac(1n)) >= 0).map((i) => [i, floor(dec(i.quantity))]);
  const group = BigInt(p.buy) + BigInt(p.get);
  let given = (whole.reduce((s, [, n]) => s + n, 0n) / group) * BigInt(p.get);
  if (given === 0n) return { offs: new Map(), counted: new Set() };
  const share = div(dec(p.percent), frac(100n));
  const unit = (i) => div(cents(i.amount), dec(i.quantity));
  const sorted = [...whole].sort((a, b) => cmp(unit(a[0]), unit(b[0])) || a[0].index - b[0].index);
  const offs = new Map();
  for (const [item, n] of sorted) {
    if (given === 0n) break;
    const k = minBig(n, given);
    given -= k;
    offs.set(item.index, toCents(mul(div(mul(cents(item.amount), frac(k)), dec(item.quantity)), share)));
  }
  return { offs, counted: new Set(whole.map(([i]) => i.index)) };
}

function bundle(p, pool) {
  const wanted = (p.items || []).map((x) => [Number(x.product_id), dec(x.quantity)]);
  let sets = null;
  for (const [productId, quantity] of wanted) {
    const held = pool.filter((i) => i.product_id === productId).reduce((s, i) => add(s, dec(i.quantity)), frac(0n));
    const n = floor(div(held, quantity));
    sets = sets === null ? n : minBig(sets, n);
  }
  if (!sets) return { offs: new Map(), counted: new Set() };
  const parts = [];
  for (const [productId, quantity] of wanted) {
    let need = mul(quantity, frac(sets));
    for (const item of pool) {
      if (item.product_id !== productId || cmp(need, frac(0n)) <= 0) continue;
      const q = dec(item.quantity);
      const take = cmp(q, need) < 0 ? q : need;
      need = sub(need, take);
      parts.push([item, div(mul(cents(item.amount), take), q)]);
    }
  }
  const value = parts.reduce((s, [, v]) => add(s, v), frac(0n));
  const price = mul(dec(p.price), frac(sets));
  if (cmp(value, price) <= 0) return { offs: new Map(), counted: new Set() };
  const saving = toCents(sub(value, price));
  parts.sort((a, b) => a[0].index - b[0].index);
  const offs = new Map();
  let running = frac(0n);
  let given = 0n;
  for (const [item, v] of parts) {
    running = add(running, v);
    const upto = toCents(div(mul(cents(saving), running), value));
    offs.set(item.index, (offs.get(item.index) || 0n) + upto - given);
    given = upto;
  }
  return { offs, counted: new Set(parts.map(([i]) => i.index)) };
}

function run(rules, items) {
  const claimed = new Set();
  const applied = new Map();
  for (const rule of rules) {
    const pool = items.filter((i) => !claimed.has(i.index) && i.amount > 0n && eligible(rule, i));
    if (!pool.length) continue;
    const { offs, counted } = offsOf(rule, pool);
    if (![...offs.values()].some((o) => o > 0n)) continue;
    for (const i of counted) claimed.add(i);
    for (const [index, off] of offs) if (off > 0n) applied.set(index, { promotion_id: rule.id, name: rule.name, off });
  }
  return applied;
}

const total = (applied) => [...applied.values()].reduce((s, a) => s + a.off, 0n);

// A category and the ones above it, nearest first, from {id: parent_id}.
export function categoryPath(categoryId, parents) {
  const path = [];
  let at = categoryId ?? null;
  while (at != null && !path.includes(at)) {
    path.push(at);
    at = parents.get ? parents.get(at) ?? null : parents[at] ?? null;
  }
  return path;
}

// What the promotions (already in force) take off the items
// [{index, product_id, categories, brand_id, quantity, amount (BigInt cents)}]:
// Map(index -> {promotion_id, name, off (BigInt cents)}).
export function applyPromotions(rules, items) {
  const ordered = [...rules].sort((a, b) => b.priority - a.priority || a.id - b.id);
  if (!ordered.length) return new Map();
  const candidates = [run(ordered.filter((r) => r.combines), items)];
  for (const r of ordered) if (!r.combines) candidates.push(run([r], items));
  let best = candidates[0];
  let bestTotal = total(best);
  for (const c of candidates.slice(1)) {
    const t = total(c);
    if (t > bestTotal) {
      best = c;
      bestTotal = t;
    }
  }
  return best;
}
