// The catalog on the device: the public change feeds (README "Offline tills: the
// sync protocol") walked into IndexedDB. The first walk starts at 1970 in pages of
// 1000; later walks start at the feed's sync_token; records are upserts by id and
// tombstones delete. Units have no feed: the plain list is fetched whole.

import * as api from "./api.js";
import * as db from "./db.js";

const EPOCH = "1970-01-01T00:00:00Z";
const LIMIT = 1000; // the feeds' largest page

export const FEEDS = [
  ["products", "/products", productShape],
  ["customers", "/customers", customerShape],
  ["modes", "/payment-modes", (r) => r],
  ["taxes", "/taxes", (r) => r],
  ["promotions", "/promotions", (r) => r],
  // Only their place in the tree: promotions on a category cover the ones below it.
  ["categories", "/categories", (r) => ({ id: r.id, parent_id: r.parent_id ?? null })],
];

function productShape(p) {
  const barcodes = Array.isArray(p.barcodes) ? p.barcodes.filter(Boolean) : p.barcode ? [p.barcode] : [];
  return {
    id: p.id,
    xid: p.xid,
    name: p.name,
    name_lc: (p.name || "").toLowerCase(),
    item_code: p.item_code,
    barcodes,
    sales_price: p.sales_price,
    current_stock: p.current_stock,
    unit: p.unit,
    tax_id: p.tax_id ?? p.tax?.id ?? null,
    category_id: p.category_id ?? p.category?.id ?? null,
    brand_id: p.brand_id ?? p.brand?.id ?? null,
    has_additional_units: !!p.has_additional_units,
    additional_units: p.additional_units || null,
  };
}

function customerShape(c) {
  return { ...c, name_lc: (c.name || "").toLowerCase() };
}

export class SyncError extends Error {
  constructor(answer) {
    super(api.reason(answer));
    this.answer = answer;
  }
}

// Walk one feed from its token; answers the number of records applied.
async function walk(store, path, shape, onPage) {
  const tokenName = `sync:${store}`;
  const since = (await db.config.get(tokenName)) || EPOCH;
  let applied = 0;
  let token = null;
  // The next page is asked for while this one goes into IndexedDB (the server's
  // time and the device's overlap): one request in flight at a time.
  let next = api.pub(`${path}?updated_since=${encodeURIComponent(since)}&limit=${LIMIT}`);
  while (next) {
    const answer = await next;
    if (!answer.ok) throw new SyncError(answer);
    const page = answer.body.data;
    const records = page.data;
    next = page.next_cursor ? api.pub(`${path}?cursor=${encodeURIComponent(page.next_cursor)}&limit=${LIMIT}`) : null;
    await db.apply(store, records, shape);
    applied += records.length;
    token = page.sync_token;
    if (onPage) await onPage(store, records);
  }
  if (token) await db.config.set(tokenName, token);
  return applied;
}

// Products with additional units need their unit list (GET /products/{id}) unless
// the feed carries it.
async function fillUnits(records) {
  for (const r of records) {
    if (r.archived || !r.has_additional_units || Array.isArray(r.additional_units)) continue;
    const answer = await api.pub(`/products/${r.id}`);
    if (!answer.ok) continue;
    const p = await db.get("products", r.id);
    if (!p) continue;
    const d = answer.body.data;
    p.additional_units = d.additional_units || [];
    if (Array.isArray(d.barcodes) && d.barcodes.length) p.barcodes = d.barcodes;
    if (p.tax_id == null && d.tax_id != null) p.tax_id = d.tax_id;
    await db.put("products", p);
  }
}

// Every feed, then the units and the cashiers; onPage(store, records) lets the
// screen update its memory copy as pages land.
export async function syncAll({ onPage, extra } = {}) {
  let changed = 0;
  for (const [store, path, shape] of FEEDS) {
    changed += await walk(store, path, shape, async (s, records) => {
      if (s === "products") await fillUnits(records);
      if (onPage) await onPage(s, records);
    });
  }
  const units = await api.pub("/units");
  if (units.ok) await db.apply("units", units.body.data);
  if (extra) await extra();
  const at = new Date().toISOString();
  await db.config.set("last_sync", at);
  return { changed, at };
}
