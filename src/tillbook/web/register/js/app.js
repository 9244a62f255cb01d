// The register's screen: pairing, cashier sign-in, selling, tenders, receipts,
// shifts, returns. State lives in IndexedDB (db.js); every write goes through the
// queue (queue.js); totals come from totals.js only.

import * as api from "./api.js";
import * as db from "./db.js";
import * as dec from "./dec.js";
import * as cards from "./giftcards.js";
import * as pin from "./pin.js";
import * as queue from "./queue.js";
import * as scanner from "./scanner.js";
import * as sync from "./sync.js";
import { categoryPath, inForce } from "./promotions.js";
import { saleTotals } from "./totals.js";
import { qrSvg } from "./qr.js";

const $ = (id) => document.getElementById(id);
const SYNC_EVERY = 120000;
const FLUSH_EVERY = 5000;

const state = {
  register: null,
  products: new Map(), // id -> product
  codes: new Map(), // barcode / item code (lower case) -> product
  list: [], // products for search
  customers: new Map(),
  modes: [], // the tenders money goes into the drawer or a bank by
  giftMode: null, // the tender that spends a gift card (online only)
  taxes: new Map(),
  units: new Map(),
  cashiers: [],
  cashier: null,
  cart: newCart(),
  online: navigator.onLine,
  unauthorized: null,
  shift: null,
  lastReceipt: null,
};

function newCart() {
  return { lines: [], discount: "0", customer: null };
}

// ---- small DOM helpers ------------------------------------------------------------

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("data-")) e.setAttribute(k, v);
    else if (v !== undefined && v !== null && v !== false) e[k] = v;
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}

function show(id) {
  for (const s of document.querySelectorAll(".screen")) s.hidden = s.id !== id;
}

const fmt = (cents) => dec.moneyText(cents, state.register?.money_format);

function flash(text, kind = "info") {
  const m = $("scan-message");
  m.textContent = text;
  m.dataset.kind = kind;
}

function openDialog(id) {
  const d = $(id);
  if (!d.open) d.showModal();
  return d;
}

for (const d of document.querySelectorAll("dialog")) {
  for (const b of d.querySelectorAll("button.close")) b.addEventListener("click", () => d.close());
}

// ---- start ------------------------------------------------------------------------

async function start() {
  if (navigator.storage && navigator.storage.persist) navigator.storage.persist().catch(() => {});
  if ("serviceWorker" in navigator) {
    navigator.serviceWorker.register("/register/sw.js", { scope: "/register" }).catch(() => {});
  }
  // A scanner's keys come under 50 ms apart; a slow machine (or a slow scanner)
  // may need more: the register's setting scan_gap_ms.
  scanner.listen(onScan, { gap: (await db.config.get("scan_gap_ms")) || scanner.GAP });
  const credential = await db.config.get("credential");
  if (!credential) {
    show("screen-pair");
    return;
  }
  api.useCredential(credential);
  state.register = await db.config.get("register");
  await loadLocal();
  state.shift = (await db.config.get("shift")) || null;
  if (!state.products.size && !(await db.config.get("last_sync"))) {
    show("screen-loading");
    await syncNow(true);
  } else {
    syncNow(false);
  }
  await renderStatus();
  const cashierId = await db.config.get("cashier");
  state.cashier = state.cashiers.find((c) => c.id === cashierId) || null;
  enterSelling();
  setInterval(() => syncNow(false), SYNC_EVERY);
  setInterval(() => flushNow(), FLUSH_EVERY);
  flushNow();
}

function enterSelling() {
  if (state.cashiers.length && !state.cashier) {
    showCashiers();
    return;
  }
  show("screen-sell");
  renderCart();
  $("search").focus();
}

async function loadLocal() {
  const [products, customers, modes, taxes, units, cashiers, promotions, categories] = await Promise.all(
    ["products", "customers", "modes", "taxes", "units", "cashiers", "promotions", "categories"].map((s) => db.all(s)),
  );
  state.promotions = promotions;
  state.parents = new Map(categories.map((c) => [c.id, c.parent_id]));
  state.products.clear();
  state.codes.clear();
  for (const p of products) indexProduct(p);
  state.list = [...state.products.values()];
  state.customers = new Map(customers.map((c) => [c.id, c]));
  // Gift cards and store credit (account 21300) have their balance on the server:
  // that mode is a tender of the pay dialog only, checked online before it is
  // taken; shifts, cash moves and refunds keep to the other modes. Loyalty points
  // (21400) are redeemed through the server's API only: the register offers no
  // such tender (a queued sale spending them could be refused at sync).
  state.modes = modes.filter((m) => !cards.isGiftMode(m) && m.account_code !== "21400");
  state.giftMode = modes.find(cards.isGiftMode) || null;
  state.taxes = new Map(taxes.map((t) => [t.id, t]));
  state.units = new Map(units.map((u) => [u.id, u]));
  state.cashiers = cashiers;
  const local = await db.config.get("local_customers");
  for (const c of local || []) if (!state.customers.has(c.id)) state.customers.set(c.id, c);
}

function indexProduct(p) {
  state.products.set(p.id, p);
  for (const b of p.barcodes || []) state.codes.set(String(b).toLowerCase(), p);
  if (p.item_code) state.codes.set(String(p.item_code).toLowerCase(), p);
}

// ---- pairing ----------------------------------------------------------------------

let pairToken = null;

$("pair-login").addEventListener("submit", async (e) => {
  e.preventDefault();
  const f = new FormData(e.target);
  $("pair-error").textContent = "";
  const r = await api.admin("/login", null, { method: "POST", body: { email: f.get("email"), password: f.get("password") } });
  if (!r.ok) {
    $("pair-error").textContent = r.network ? "No connection: pairing needs the server." : api.reason(r);
    return;
  }
  pairToken = r.body.token;
  let w = await api.admin("/registers/branches", pairToken);
  if (w.status === 404) w = await api.admin("/warehouses", pairToken);
  if (!w.ok) {
    $("pair-error").textContent = api.reason(w);
    return;
  }
  const rows = Array.isArray(w.body.data) ? w.body.data : w.body.data.data || [];
  const select = $("pair-warehouses");
  select.replaceChildren(...rows.map((row) => el("option", { value: row.id, text: row.name })));
  $("pair-login").hidden = true;
  $("pair-branch").hidden = false;
  select.focus();
});

$("pair-branch").addEventListener("submit", async (e) => {
  e.preventDefault();
  const f = new FormData(e.target);
  const body = { warehouse_id: Number(f.get("warehouse_id")), name: String(f.get("name")).trim() };
  const r = await api.admin("/registers", pairToken, { method: "POST", body, headers: { "Idempotency-Key": "pair-" + crypto.randomUUID() } });
  if (!r.ok) {
    $("pair-error").textContent = api.reason(r);
    return;
  }
  const d = r.body.data;
  await api.admin("/logout", pairToken, { method: "POST", body: {} });
  pairToken = null;
  await paired({ public_key: d.public_key, secret_key: d.secret_key }, {
    id: d.id,
    name: d.name,
    prefix: d.prefix,
    warehouse_id: d.warehouse_id,
    warehouse_name: d.warehouse_name,
    company_name: d.company?.name,
    money_format: d.company?.money_format,
  });
});

$("pair-key").addEventListener("submit", async (e) => {
  e.preventDefault();
  const f = new FormData(e.target);
  await paired(
    { public_key: String(f.get("public_key")).trim(), secret_key: String(f.get("secret_key")).trim() },
    { name: "Till " + String(f.get("prefix")).trim(), prefix: String(f.get("prefix")).trim() },
  );
});

async function paired(credential, register) {
  api.useCredential(credential);
  const check = await api.pub("/register");
  let reg = { ...register, register_api: false };
  if (check.ok) {
    reg = { ...reg, ...check.body.data, register_api: true };
  } else {
    const probe = await api.pub("/payment-modes?limit=1");
    if (!probe.ok) {
      $("pair-error").textContent = api.reason(probe);
      return;
    }
  }
  await db.config.set("credential", credential);
  await db.config.set("register", reg);
  await db.config.set("paired_at", new Date().toISOString());
  location.reload();
}

// ---- sync -------------------------------------------------------------------------

let syncing = null;

async function syncNow(first) {
  if (syncing) return syncing;
  syncing = (async () => {
    // Queue first, then deltas (README: post the queue in order, only then walk).
    await flushNow();
    let pages = 0;
    try {
      await sync.syncAll({
        onPage: async (store, records) => {
          pages++;
          if (store === "products") {
            for (const r of records) {
              if (r.archived) state.products.delete(r.id);
            }
          }
          if (first) $("loading-text").textContent = `${store}: page ${pages}`;
        },
        extra: registerInfo,
      });
      await loadLocal();
      setOnline(true);
    } catch (e) {
      if (e.answer && e.answer.status === 401) setUnauthorized(api.reason(e.answer));
      else if (e.answer && e.answer.network) setOnline(false);
    }
    await renderStatus();
  })().finally(() => {
    syncing = null;
  });
  return syncing;
}

// The register's own record and cashiers (register API; absent for a plain key).
async function registerInfo() {
  const reg = state.register || {};
  const r = await api.pub("/register");
  if (r.ok) {
    state.register = { ...reg, ...r.body.data, register_api: true };
    await db.config.set("register", state.register);
    const last = r.body.data.last_invoice_number;
    if (last) {
      const n = Number(String(last).split("-").pop());
      const mine = (await db.config.get("counter:invoice")) || 0;
      if (n > mine) await db.config.set("counter:invoice", n);
    }
    const c = await api.pub("/register/cashiers");
    if (c.ok) {
      await db.clear("cashiers");
      await db.apply("cashiers", c.body.data);
    }
  }
  const cats = await api.pub("/expense-categories");
  if (cats.ok) await db.config.set("expense_categories", Array.isArray(cats.body.data) ? cats.body.data : cats.body.data.data || []);
}

// ---- the queue --------------------------------------------------------------------

async function flushNow() {
  if (state.unauthorized) return;
  const result = await queue.flush({ onChange: renderStatus });
  if (result.unauthorized) setUnauthorized(result.reason);
  else if (result.offline) setOnline(false);
  else if (result.posted || result.refused) setOnline(true);
  await printCards();
  await renderStatus();
  if (!result.offline && !result.unauthorized) heartbeat();
  return result;
}

let lastBeat = 0;
async function heartbeat() {
  if (!state.register?.register_api || Date.now() - lastBeat < 30000) return;
  lastBeat = Date.now();
  const attention = (await queue.attention()).map((a) => ({ key: a.key, kind: a.kind, number: a.number, reason: a.reason, at: a.at }));
  await api.pub("/register/heartbeat", { method: "POST", body: { queued: await db.count("queue"), attention } });
}

function setOnline(online) {
  state.online = online;
}

function setUnauthorized(reason) {
  state.unauthorized = reason || "this register's credential is refused";
}

window.addEventListener("online", () => {
  state.online = true;
  queue.wake().then(() => syncNow(false));
});
window.addEventListener("offline", () => {
  state.online = false;
  renderStatus();
});

function isOffline() {
  return !navigator.onLine || !state.online;
}

async function renderStatus() {
  const reg = state.register || {};
  $("reg-name").textContent = `${reg.name || "Register"}${reg.warehouse_name ? " · " + reg.warehouse_name : ""}`;
  const net = $("net");
  if (state.unauthorized) {
    net.textContent = "Refused: " + state.unauthorized;
    net.dataset.state = "refused";
  } else {
    net.textContent = isOffline() ? "Offline" : "Online";
    net.dataset.state = isOffline() ? "offline" : "online";
  }
  $("queued").textContent = String(await db.count("queue"));
  const n = await db.count("attention");
  $("attention-count").textContent = String(n);
  $("attention-btn").hidden = n === 0 && !state.unauthorized;
  const last = await db.config.get("last_sync");
  $("last-sync").textContent = last ? new Date(last).toLocaleTimeString() : "never";
  $("shift-state").textContent = state.shift ? `Shift ${state.shift.reference}` : "No shift";
  $("cashier-name").textContent = state.cashier ? `Cashier ${state.cashier.name}` : "";
}

// ---- cashiers ---------------------------------------------------------------------

let pinFor = null;

function showCashiers() {
  show("screen-cashier");
  $("pin-form").hidden = true;
  $("pin-error").textContent = "";
  $("cashiers").replaceChildren(
    ...state.cashiers.map((c) => {
      const b = el("button", { type: "button", text: c.name });
      b.addEventListener("click", () => askPin(c));
      return b;
    }),
  );
  const first = $("cashiers").querySelector("button");
  if (first) first.focus();
}

function askPin(c) {
  pinFor = c;
  $("pin-who").textContent = c.name;
  $("pin-form").hidden = false;
  $("pin").value = "";
  $("pin").focus();
}

$("pin-cancel").addEventListener("click", showCashiers);

$("pin-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const c = pinFor;
  const r = await pin.check(c, $("pin").value);
  $("pin").value = "";
  if (r.ok) {
    state.cashier = c;
    await db.config.set("cashier", c.id);
    $("pin-error").textContent = "";
    await renderStatus();
    enterSelling();
    return;
  }
  $("pin-error").textContent = r.locked_until
    ? `${c.name} is locked on this register until ${new Date(r.locked_until).toLocaleTimeString()}.`
    : `Wrong PIN. ${r.left} ${r.left === 1 ? "try" : "tries"} left.`;
});

async function changeCashier() {
  state.cashier = null;
  await db.config.set("cashier", null);
  await renderStatus();
  if (state.cashiers.length) showCashiers();
}

// ---- catalog: scan and search ----------------------------------------------------

function onScan(code) {
  const t0 = performance.now();
  if ($("screen-sell").hidden || document.querySelector("dialog[open]")) {
    const ret = $("dlg-return");
    if (ret.open) {
      $("return-number").value = code;
      findReturn();
    } else if ($("dlg-pay").open && !$("pay-card-row").hidden) {
      // A gift card scanned at the tender is its code, never a product.
      $("pay-card").value = code;
      $("pay-amount").focus();
      $("pay-amount").select();
    } else if ($("dlg-giftcard").open) {
      $("giftcard-code").value = code;
    }
    return;
  }
  const p = state.codes.get(code.toLowerCase());
  if (!p) {
    flash(`Unknown code ${code}`, "error");
    return;
  }
  addLine(p);
  flash(`${p.name} added`);
  window.__lastScanMs = performance.now() - t0;
}

let searchTimer = null;
$("search").addEventListener("input", () => searchNow());
$("search").addEventListener("keydown", (e) => {
  if (e.key === "Enter") {
    e.preventDefault();
    const q = $("search").value.trim();
    const exact = state.codes.get(q.toLowerCase());
    const first = exact || lastResults[0];
    if (first) {
      addLine(first);
      $("search").value = "";
      searchNow();
    } else if (q) flash(`Nothing matches ${q}`, "error");
  } else if (e.key === "ArrowDown") {
    const b = $("results").querySelector("button");
    if (b) {
      e.preventDefault();
      b.focus();
    }
  }
});

let lastResults = [];

export function search(q, limit = 20) {
  q = q.trim().toLowerCase();
  if (!q) return [];
  const out = [];
  const exact = state.codes.get(q);
  if (exact) out.push(exact);
  for (const p of state.products.values()) {
    if (p === exact) continue;
    if (p.name_lc.includes(q) || (p.item_code && p.item_code.toLowerCase().includes(q)) || (p.barcodes || []).some((b) => b.startsWith(q))) {
      out.push(p);
      if (out.length >= limit) break;
    }
  }
  return out;
}

function searchNow() {
  clearTimeout(searchTimer);
  lastResults = search($("search").value);
  $("results").replaceChildren(
    ...lastResults.map((p) => {
      const b = el("button", { type: "button", class: "result" }, el("span", { text: p.name }), el("small", { text: ` ${p.item_code} · ${fmt(dec.parse(p.sales_price, 4) / 100n)}` }));
      b.addEventListener("click", () => {
        addLine(p);
        $("search").value = "";
        searchNow();
        $("search").focus();
      });
      return el("li", {}, b);
    }),
  );
}

// ---- the cart ---------------------------------------------------------------------

function priceOf(p, unitId) {
  if (!unitId) return String(p.sales_price);
  const u = (p.additional_units || []).find((x) => x.child_unit_id === unitId);
  if (!u) return String(p.sales_price);
  if (u.alternative_price && Number(u.alternative_price) > 0) return String(u.alternative_price);
  const v = dec.parse(p.sales_price, 4) * dec.parse(u.operator_value, 4);
  return dec.plain(dec.divRound(v, dec.pow10(4)), 4);
}

function addLine(p, unitId = null) {
  const lines = state.cart.lines;
  const same = lines.find((l) => l.product_id === p.id && l.unit_id === unitId && l.discount_rate === "0");
  if (same) {
    same.quantity = dec.plain(dec.parse(same.quantity, 4) + dec.parse(1, 4), 4);
  } else {
    lines.push({ product_id: p.id, xid: p.xid, name: p.name, quantity: "1", unit_id: unitId, unit_price: priceOf(p, unitId), discount_rate: "0", tax_id: p.tax_id ?? null });
  }
  renderCart();
}

function taxOf(line) {
  const t = line.tax_id != null ? state.taxes.get(line.tax_id) : null;
  return t ? { tax_rate: t.rate, tax_inclusive: !!t.inclusive } : { tax_rate: 0, tax_inclusive: false };
}

// The promotions that price a sale rung up at `at` here (the server prices it by the
// same rules at its order_date: orders/promotions.py).
function promotionsAt(at) {
  const reg = state.register || {};
  return (state.promotions || []).filter((r) => inForce(r, reg.warehouse_id, at, reg.timezone));
}

function cartTotals(at = new Date()) {
  return saleTotals({
    lines: state.cart.lines.map((l) => {
      const p = state.products.get(l.product_id);
      const categories = categoryPath(p?.category_id ?? null, state.parents || new Map());
      return { quantity: l.quantity, unit_price: l.unit_price, discount_rate: l.discount_rate, product_id: l.product_id, categories, brand_id: p?.brand_id ?? null, ...taxOf(l) };
    }),
    discount: state.cart.discount,
    rules: promotionsAt(at),
  });
}

function renderCart() {
  const t = cartTotals();
  const rows = state.cart.lines.map((l, i) => {
    const name = el("button", { type: "button", class: "link", text: l.name, title: "Quantity, unit, discount (F3)" });
    name.addEventListener("click", () => editLine(i));
    const rm = el("button", { type: "button", class: "icon", text: "×", title: "Remove" });
    rm.setAttribute("aria-label", `Remove ${l.name}`);
    rm.addEventListener("click", () => {
      state.cart.lines.splice(i, 1);
      renderCart();
    });
    const unit = l.unit_id ? unitName(l) : "";
    return el(
      "tr",
      {},
      el("td", {}, name, promoNote(t.lines[i])),
      el("td", { class: "num", text: l.quantity + (unit ? " " + unit : "") }),
      el("td", { class: "num", text: dec.plain(dec.parse(l.unit_price, 4), 4) }),
      el("td", { class: "num", text: l.discount_rate === "0" ? "" : l.discount_rate }),
      el("td", { class: "num", text: fmt(t.lines[i].total) }),
      el("td", {}, rm),
    );
  });
  $("lines").replaceChildren(...rows);
  $("empty").hidden = rows.length > 0;
  $("t-subtotal").textContent = fmt(t.subtotal);
  $("t-tax").textContent = fmt(t.tax);
  $("t-discount").textContent = fmt(t.discount);
  $("t-total").textContent = fmt(t.total);
  const c = state.cart.customer ? state.customers.get(state.cart.customer) : null;
  $("customer-name").textContent = c ? c.name : "Walk-in";
}

// The promotion that priced a line, under its name: what it took off.
function promoNote(line) {
  if (!line.promotion) return "";
  return el("small", { class: "promo", text: `${line.promotion.name} −${fmt(line.promotion.off)}` });
}

function unitName(l) {
  const p = state.products.get(l.product_id);
  const u = (p?.additional_units || []).find((x) => x.child_unit_id === l.unit_id);
  return u ? u.unit.short_name || u.unit.name : "";
}

let editing = null;

function editLine(i) {
  const l = state.cart.lines[i];
  if (!l) return;
  editing = i;
  const p = state.products.get(l.product_id);
  $("line-title").textContent = l.name;
  $("line-qty").value = l.quantity;
  $("line-discount").value = l.discount_rate;
  const base = el("option", { value: "", text: p?.unit?.short_name || p?.unit?.name || "base unit" });
  $("line-unit").replaceChildren(base, ...(p?.additional_units || []).map((u) => el("option", { value: u.child_unit_id, text: `${u.unit.name} (${u.operator_value})` })));
  $("line-unit").value = l.unit_id || "";
  $("line-error").textContent = "";
  openDialog("dlg-line");
  $("line-qty").select();
}

$("line-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const l = state.cart.lines[editing];
  const q = dec.tryParse($("line-qty").value, 4);
  const d = dec.tryParse($("line-discount").value || "0", 4);
  if (q === null || q <= 0n) return ($("line-error").textContent = "Quantity: a number above 0 with at most 4 decimals");
  if (d === null || d < 0n || d > 1000000n) return ($("line-error").textContent = "Discount: 0 to 100");
  const unit = $("line-unit").value || null;
  const p = state.products.get(l.product_id);
  if (unit !== l.unit_id) {
    l.unit_id = unit;
    l.unit_price = priceOf(p, unit);
  }
  l.quantity = dec.plain(q, 4);
  l.discount_rate = dec.plain(d, 4);
  $("dlg-line").close();
  renderCart();
  $("search").focus();
});

$("discount-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const v = dec.tryParse($("order-discount").value || "0", 2);
  if (v === null || v < 0n) return ($("discount-error").textContent = "An amount with at most 2 decimals");
  const before = state.cart.discount;
  state.cart.discount = dec.format(v, 2);
  if (cartTotals().overDiscount) {
    state.cart.discount = before;
    return ($("discount-error").textContent = "The discount is more than the sale");
  }
  $("dlg-discount").close();
  renderCart();
});

function orderDiscount() {
  $("order-discount").value = state.cart.discount;
  $("discount-error").textContent = "";
  openDialog("dlg-discount");
  $("order-discount").select();
}

// ---- customers --------------------------------------------------------------------

function customerDialog() {
  $("customer-search").value = "";
  renderCustomers();
  openDialog("dlg-customer");
  $("customer-search").focus();
}

$("customer-search").addEventListener("input", renderCustomers);

function renderCustomers() {
  const q = $("customer-search").value.trim().toLowerCase();
  const found = [];
  for (const c of state.customers.values()) {
    if (c.is_walk_in) continue;
    if (!q || c.name_lc.includes(q) || (c.phone || "").includes(q)) found.push(c);
    if (found.length >= 20) break;
  }
  $("customer-results").replaceChildren(
    ...found.map((c) => {
      const b = el("button", { type: "button", text: `${c.name}${c.phone ? " · " + c.phone : ""}` });
      b.addEventListener("click", () => pickCustomer(c.id));
      return el("li", {}, b);
    }),
  );
}

function pickCustomer(id) {
  state.cart.customer = id;
  $("dlg-customer").close();
  renderCart();
  showPoints(id);
}

// A picked customer's loyalty points live on the server: looked up while online,
// and said to be unknown offline (they cannot be redeemed here either way).
async function showPoints(id) {
  const line = $("customer-points");
  line.hidden = true;
  if (!id || typeof id !== "number") return;
  line.textContent = "Loyalty points: …";
  line.hidden = false;
  if (isOffline()) {
    line.textContent = "Loyalty points: offline, they cannot be looked up now";
    return;
  }
  const answer = await api.pub(`/customers/${id}/loyalty`);
  if (state.cart.customer !== id) return; // another customer was picked meanwhile
  const data = answer.ok ? answer.body?.data : null;
  if (!data) {
    line.textContent = answer.network ? "Loyalty points: offline, they cannot be looked up now" : "Loyalty points: not available";
    return;
  }
  if (!data.enrolled) {
    line.hidden = true;
    return;
  }
  line.textContent = `Loyalty points: ${data.points} (worth ${fmt(dec.parse(data.value, 2))})`;
}

$("customer-walkin").addEventListener("click", () => pickCustomer(null));

$("new-customer").addEventListener("click", async () => {
  const name = $("new-customer-name").value.trim();
  if (!name) return;
  const phone = $("new-customer-phone").value.trim() || undefined;
  const prefix = state.register.prefix;
  const n = await nextNumber("customer");
  const key = `register-${prefix}-customer-${pad(n)}`;
  await queue.add({ key, kind: "customer", number: `${prefix}-C${pad(n)}`, path: "/customers", body: { name, phone } });
  // Until its answer is stored, the sale names it by the write's key.
  const local = { id: "@" + key, name, name_lc: name.toLowerCase(), phone: phone || null, local: true };
  const locals = (await db.config.get("local_customers")) || [];
  locals.push(local);
  await db.config.set("local_customers", locals);
  state.customers.set(local.id, local);
  $("new-customer-name").value = "";
  $("new-customer-phone").value = "";
  pickCustomer(local.id);
  flushNow();
});

function walkIn() {
  for (const c of state.customers.values()) if (c.is_walk_in) return c;
  return null;
}

// ---- numbers ----------------------------------------------------------------------

const pad = (n) => String(n).padStart(6, "0");

async function nextNumber(kind) {
  return db.atomic(["config"], (tx) => {
    const s = tx.objectStore("config");
    const out = { n: 0 };
    const r = s.get(`counter:${kind}`);
    r.onsuccess = () => {
      out.n = (r.result || 0) + 1;
      s.put(out.n, `counter:${kind}`);
    };
    return out;
  }).then((o) => o.n);
}

// ---- tender -----------------------------------------------------------------------

let tenders = [];
let payMode = null;

const CARD_OFFLINE = "Offline: spending a gift card needs the connection (its balance is on the server). Take another tender, or wait until the register is back online.";

function payDialog() {
  if (!state.cart.lines.length) return flash("The cart is empty", "error");
  tenders = [];
  payMode = state.modes.find((m) => m.code === "cash") || state.modes[0];
  $("pay-error").textContent = "";
  $("pay-card").value = "";
  const modes = state.giftMode ? [...state.modes, state.giftMode] : state.modes;
  $("pay-modes").replaceChildren(
    ...modes.map((m) => {
      const b = el("button", { type: "button", text: m.name, "data-mode": String(m.id) });
      b.addEventListener("click", () => {
        payMode = m;
        const gift = m === state.giftMode;
        $("pay-error").textContent = gift && isOffline() ? CARD_OFFLINE : "";
        renderPay();
        $(gift ? "pay-card" : "pay-amount").focus();
      });
      return b;
    }),
  );
  openDialog("dlg-pay");
  renderPay();
  $("pay-amount").value = dec.format(left(), 2);
  $("pay-amount").select();
}

function left() {
  const total = cartTotals().total;
  return total - tenders.reduce((a, t) => a + t.applied, 0n);
}

function renderPay() {
  const t = cartTotals();
  $("pay-total").textContent = fmt(t.total);
  for (const b of $("pay-modes").querySelectorAll("button")) b.setAttribute("aria-pressed", String(payMode && b.dataset.mode === String(payMode.id)));
  $("pay-card-row").hidden = !payMode || payMode !== state.giftMode;
  $("tenders").replaceChildren(...tenders.map((x) => el("li", { text: `${x.card ? cards.label(cards.last4(x.card)) : x.mode.name} ${fmt(x.tendered)}${x.change ? " (change " + fmt(x.change) + ")" : ""}` })));
  $("pay-left").textContent = fmt(left() > 0n ? left() : 0n);
  const change = tenders.reduce((a, x) => a + x.change, 0n);
  $("pay-change").textContent = fmt(change);
}

async function addTender() {
  const amount = dec.tryParse($("pay-amount").value, 2);
  if (amount === null || amount <= 0n) {
    $("pay-error").textContent = "An amount above 0 with at most 2 decimals";
    return false;
  }
  const remaining = left();
  if (remaining <= 0n) return true;
  if (payMode === state.giftMode) return addCardTender(amount, remaining);
  const cash = payMode.code === "cash";
  if (amount > remaining && !cash) {
    $("pay-error").textContent = `${payMode.name} cannot take more than ${fmt(remaining)}`;
    return false;
  }
  const applied = amount > remaining ? remaining : amount;
  tenders.push({ mode: payMode, tendered: amount, applied, change: amount - applied });
  $("pay-error").textContent = "";
  renderPay();
  $("pay-amount").value = left() > 0n ? dec.format(left(), 2) : "";
  return true;
}

// A gift card's tender, taken only once the server says the card holds the amount
// (with what this sale already takes from the same card): a sale queued with a card
// the server then refuses would need a manager. Each card is its own tender.
async function addCardTender(amount, remaining) {
  const refuse = (text) => {
    $("pay-error").textContent = text;
    return false;
  };
  if (isOffline()) return refuse(CARD_OFFLINE);
  const code = cards.normalize($("pay-card").value);
  if (!code) return refuse("Gift card code: the 16 characters printed on the card (type or scan them)");
  if (amount > remaining) return refuse(`A gift card gives no change: at most ${fmt(remaining)}`);
  $("pay-error").textContent = "Checking the card…";
  const checked = await cardBalance(code);
  if (!checked.ok) return refuse(checked.reason);
  const used = tenders.filter((t) => t.card === code).reduce((a, t) => a + t.applied, 0n);
  if (amount + used > checked.balance) {
    const also = used ? `, ${fmt(used)} of it already on this sale` : "";
    return refuse(`${cards.label(cards.last4(code))} holds ${fmt(checked.balance)}${also}: not enough for ${fmt(amount)}`);
  }
  if (left() !== remaining) return refuse("The sale changed while the card was checked: try again");
  tenders.push({ mode: payMode, tendered: amount, applied: amount, change: 0n, card: code });
  $("pay-error").textContent = "";
  $("pay-card").value = "";
  renderPay();
  $("pay-amount").value = left() > 0n ? dec.format(left(), 2) : "";
  return true;
}

// What a card holds, asked of the server: {ok, balance (cents), data} or {ok:
// false, reason} (an unknown, expired or spent card is one refusal, as the server
// says it; no connection says that spending a card needs it).
async function cardBalance(code) {
  const r = await api.pub("/gift-cards/balance", { method: "POST", body: { code } });
  if (r.network) {
    setOnline(false);
    renderStatus();
    return { ok: false, reason: CARD_OFFLINE };
  }
  if (!r.ok) return { ok: false, reason: `${cards.label(cards.last4(code))}: ${api.reason(r)}` };
  return { ok: true, balance: dec.parse(r.body.data.balance, 2), data: r.body.data };
}

for (const id of ["pay-amount", "pay-card"]) {
  $(id).addEventListener("keydown", (e) => {
    if (e.key !== "Enter") return;
    e.preventDefault();
    completeOrAdd();
  });
}

$("pay-done").addEventListener("click", () => completeOrAdd());

let adding = false;

async function completeOrAdd() {
  if (adding) return; // a card being checked: one tender at a time
  adding = true;
  try {
    if ($("pay-amount").value.trim() && left() > 0n && !(await addTender())) return;
  } finally {
    adding = false;
  }
  if (left() > 0n) return;
  await complete(false);
}

$("pay-account").addEventListener("click", async () => {
  if ($("pay-amount").value.trim() && left() > 0n && tenders.length === 0 && false) addTender();
  if (!state.cart.customer) {
    $("pay-error").textContent = "On account needs a named customer (F4)";
    return;
  }
  if (isOffline()) {
    $("pay-error").textContent = "Offline: the customer's credit limit cannot be checked, so on account is not possible now";
    return;
  }
  await complete(true);
});

async function complete(onAccount) {
  const started = performance.now();
  // One moment for the promotions the totals apply and the sale's order_date.
  const now = new Date();
  const t = cartTotals(now);
  if (!onAccount && left() > 0n) return;
  const customer = state.cart.customer || walkIn()?.id;
  if (!customer) {
    $("pay-error").textContent = "No walk-in customer in the catalog: pick a customer";
    return;
  }
  const reg = state.register;
  const offline = isOffline();
  const change = tenders.reduce((a, x) => a + x.change, 0n);
  // Cash, card and the like merge by mode; each gift card stays its own tender,
  // naming its card (the body carries the code until the sale is posted).
  const byMode = new Map();
  const payments = [];
  for (const x of tenders) {
    if (x.card) {
      payments.push({ amount: dec.format(x.applied, 2), payment_mode_id: x.mode.id, gift_card_code: x.card });
    } else if (byMode.has(x.mode.id)) {
      byMode.get(x.mode.id).cents += x.applied;
    } else {
      const p = { cents: x.applied, payment_mode_id: x.mode.id };
      byMode.set(x.mode.id, p);
      payments.push(p);
    }
  }
  for (const p of byMode.values()) {
    p.amount = dec.format(p.cents, 2);
    delete p.cents;
  }
  const lines = state.cart.lines.map((l) => ({ ...l }));
  const cashier = state.cashier;
  const shift = state.shift;
  const built = await db.atomic(["config", "queue", "history"], (tx) => {
    const cfg = tx.objectStore("config");
    const out = {};
    const rc = cfg.get("counter:invoice");
    const rs = cfg.get("queue_seq");
    let got = 0;
    const go = () => {
      if (++got < 2) return;
      const n = (rc.result || 0) + 1;
      const seq = (rs.result || 0) + 1;
      cfg.put(n, "counter:invoice");
      cfg.put(seq, "queue_seq");
      const number = `${reg.prefix}-${pad(n)}`;
      const body = {
        user_id: customer,
        order_date: now.toISOString(),
        invoice_number: number,
        product_items: lines.map((l) => {
          const item = { xid: l.xid, quantity: l.quantity, unit_price: l.unit_price };
          if (l.unit_id) item.selected_unit_id = l.unit_id;
          if (l.tax_id != null) item.tax_id = l.tax_id;
          if (l.discount_rate !== "0") item.discount_rate = l.discount_rate;
          return item;
        }),
        discount: state.cart.discount,
        all_payments: payments,
        subtotal: dec.format(t.subtotal, 2),
        tax_amount: dec.format(t.tax, 2),
        total: dec.format(t.total, 2),
      };
      if (reg.register_api) {
        if (cashier) body.staff_member = cashier.id;
        if (offline) body.offline = true;
        if (shift) body.shift_id = shift.reference;
      }
      const key = `register-${reg.prefix}-sale-${pad(n)}`;
      tx.objectStore("queue").add({ seq, key, kind: "sale", number, path: "/sales", body, created: now.toISOString(), tries: 0, next_at: 0 });
      const receipt = {
        number,
        at: now.toISOString(),
        cashier: cashier?.name || null,
        customer: state.customers.get(customer)?.name || "Walk-in",
        lines: lines.map((l, i) => ({ name: l.name, quantity: l.quantity, unit: l.unit_id ? unitName(l) : "", unit_price: l.unit_price, discount_rate: l.discount_rate, total: dec.format(t.lines[i].total, 2), tax: dec.format(t.lines[i].tax, 2), promotion: t.lines[i].promotion ? t.lines[i].promotion.name : null, promotion_discount: t.lines[i].promotion ? dec.format(t.lines[i].promotion.off, 2) : null })),
        subtotal: dec.format(t.subtotal, 2),
        tax: dec.format(t.tax, 2),
        discount: dec.format(t.discount, 2),
        total: dec.format(t.total, 2),
        tenders: tenders.map((x) => ({ mode: x.mode.name, mode_id: x.mode.id, code: x.mode.code, tendered: dec.format(x.tendered, 2), applied: dec.format(x.applied, 2), card_last4: x.card ? cards.last4(x.card) : null })),
        change: dec.format(change, 2),
        due: dec.format(t.total - tenders.reduce((a, x) => a + x.applied, 0n), 2),
        shift: shift?.reference || null,
        offline,
      };
      tx.objectStore("history").put(receipt);
      out.receipt = receipt;
    };
    rc.onsuccess = go;
    rs.onsuccess = go;
    return out;
  });
  state.cart = newCart();
  tenders = [];
  $("dlg-pay").close();
  renderCart();
  showPoints(null);
  state.lastReceipt = built.receipt;
  printReceipt(built.receipt);
  window.__lastTenderMs = performance.now() - started;
  flash(`Sale ${built.receipt.number} done${change ? ` · change ${fmt(change)}` : ""}`);
  window.__lastSale = built.receipt.number;
  renderStatus();
  $("search").focus();
  if (!offline) setTimeout(() => flushNow(), 0);
}

// ---- receipts ---------------------------------------------------------------------

function printReceipt(r) {
  const reg = state.register || {};
  const m = (s) => fmt(dec.parse(s, 2));
  const rows = r.lines.map((l) =>
    el("tr", {}, el("td", {}, el("div", { text: l.name }), el("small", { text: `${l.quantity}${l.unit ? " " + l.unit : ""} × ${dec.plain(dec.parse(l.unit_price, 4), 4)}${l.discount_rate !== "0" ? ` −${l.discount_rate}%` : ""}` }), l.promotion ? el("small", { class: "promo", text: `${l.promotion} −${m(l.promotion_discount)}` }) : ""), el("td", { class: "num", text: m(l.total) })),
  );
  const line = (label, value, cls) => el("tr", { class: cls || "" }, el("td", { text: label }), el("td", { class: "num", text: value }));
  const qr = el("div", { class: "qr" });
  try {
    qr.append(qrSvg(r.number));
  } catch {
    /* a receipt prints without its QR code rather than not at all */
  }
  $("receipt").replaceChildren(
    el("h1", { text: reg.company_name || reg.name || "" }),
    reg.receipt_header ? el("p", { class: "pre", text: reg.receipt_header }) : null,
    el("p", { text: `${r.kind === "return" ? "Return" : "Invoice"} ${r.number}` }),
    el("p", { text: new Date(r.at).toLocaleString() }),
    r.cashier ? el("p", { text: `Cashier: ${r.cashier}` }) : null,
    el("p", { text: `Customer: ${r.customer}` }),
    el("table", {}, el("tbody", {}, ...rows)),
    el(
      "table",
      { class: "sums" },
      el(
        "tbody",
        {},
        line("Subtotal", m(r.subtotal)),
        line("Tax", m(r.tax)),
        r.discount !== "0.00" ? line("Discount", "−" + m(r.discount)) : null,
        line("TOTAL", m(r.total), "big"),
        ...r.tenders.map((x) => line(x.card_last4 ? cards.label(x.card_last4) : x.mode, m(x.tendered))),
        r.change !== "0.00" ? line("Change", m(r.change)) : null,
        r.due !== "0.00" ? line("On account", m(r.due)) : null,
      ),
    ),
    qr,
    r.offline ? el("p", { class: "muted", text: "Rung up offline" }) : null,
    reg.receipt_footer ? el("p", { class: "pre", text: reg.receipt_footer }) : null,
  );
  printNow();
  window.__printed = (window.__printed || 0) + 1;
}

function printNow() {
  document.body.classList.add("printing-receipt");
  try {
    window.print();
  } finally {
    document.body.classList.remove("printing-receipt");
  }
}

async function reprint() {
  let r = state.lastReceipt;
  if (!r) {
    const all = await db.all("history");
    r = all.sort((a, b) => (a.at < b.at ? -1 : 1)).pop();
  }
  if (r) printReceipt(r);
  else flash("Nothing to reprint yet", "error");
}

// ---- gift cards: selling and loading ---------------------------------------------

// Selling or loading a card is a write like a sale: queued with its own key, posted
// in order, so it works offline too. A new card's code is in the server's first
// answer only: the receipt prints it when that answer is stored (at once online,
// on the flush that posts it otherwise), and the stored answer then keeps the last
// four only (printCards). The keys of the cards still to print: config
// "cards_to_print".

function giftCardDialog() {
  for (const id of ["giftcard-error", "giftcard-balance"]) $(id).textContent = "";
  $("giftcard-amount").value = "";
  $("giftcard-code").value = "";
  $("giftcard-mode").replaceChildren(...state.modes.map((m) => el("option", { value: m.id, text: m.name })));
  openDialog("dlg-giftcard");
  $("giftcard-amount").focus();
}

let sellingCard = false;

$("giftcard-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  if (sellingCard) return;
  sellingCard = true;
  try {
    await sellCard();
  } finally {
    sellingCard = false;
  }
});

async function sellCard() {
  const refuse = (text) => ($("giftcard-error").textContent = text);
  $("giftcard-error").textContent = "";
  const amount = dec.tryParse($("giftcard-amount").value, 2);
  if (amount === null || amount <= 0n) return refuse("Amount: above 0, at most 2 decimals");
  const typed = $("giftcard-code").value.trim();
  const code = typed ? cards.normalize(typed) : null;
  if (typed && !code) return refuse("Card code: the 16 characters printed on the card");
  const modeId = Number($("giftcard-mode").value);
  if (!modeId) return refuse("Paid by: pick how the card is paid");
  const reg = state.register;
  const n = await nextNumber("giftcard");
  const key = `register-${reg.prefix}-giftcard-${pad(n)}`;
  const number = `${reg.prefix}-G${pad(n)}`;
  const money = dec.format(amount, 2);
  const body = { amount: money, all_payments: [{ amount: money, payment_mode_id: modeId }] };
  if (code) body.code = code;
  if (state.cart.customer) body.user_id = state.cart.customer;
  // Listed before it is queued: a flush may post it at once.
  await cardsToPrint((keys) => [...keys, key]);
  await queue.add({ key, kind: "gift-card", number, path: "/gift-cards", body });
  renderStatus();
  if (!isOffline()) {
    $("giftcard-balance").textContent = "Recording the card…";
    // A flush already under way may have read the queue before this write: a
    // second one posts it.
    await flushNow();
    if ((await queue.pending()).some((w) => w.key === key)) await flushNow();
  }
  await printCards();
  $("giftcard-balance").textContent = "";
  const done = await db.get("done", key);
  const refused = await db.get("attention", key);
  if (refused) return refuse(`Refused: ${refused.reason} (it is under Needs attention)`);
  $("dlg-giftcard").close();
  if (done && done.printed) {
    flash(`Gift card ${number} ${code ? "loaded" : "sold"}: receipt printed`);
  } else {
    flash(`Offline: gift card ${number} is queued. ${code ? "Its receipt" : "The card's code"} prints once the register is back online.`);
  }
  $("search").focus();
}

$("giftcard-check").addEventListener("click", async () => {
  $("giftcard-error").textContent = "";
  $("giftcard-balance").textContent = "";
  const code = cards.normalize($("giftcard-code").value);
  if (!code) return ($("giftcard-error").textContent = "Card code: the 16 characters printed on the card");
  if (isOffline()) return ($("giftcard-error").textContent = "Offline: a card's balance is on the server; check it once the register is back online");
  const checked = await cardBalance(code);
  if (!checked.ok) return ($("giftcard-error").textContent = checked.reason);
  const d = checked.data;
  $("giftcard-balance").textContent = `${cards.label(cards.last4(code))} holds ${fmt(checked.balance)}${d.expires_on ? `, until ${d.expires_on}` : ""}`;
});

// Change the list of card writes waiting for their receipt, in one transaction.
function cardsToPrint(change) {
  return db.atomic(["config"], (tx) => {
    const cfg = tx.objectStore("config");
    const r = cfg.get("cards_to_print");
    r.onsuccess = () => cfg.put(change(r.result || []), "cards_to_print");
    return {};
  });
}

let cardPrinting = Promise.resolve();

// Print the receipt of each card whose answer has come, one call at a time (every
// flush calls it): the answer is stored without the full code first, so a code is
// printed once, and then only the paper has it.
function printCards() {
  cardPrinting = cardPrinting.then(printCardsNow, printCardsNow);
  return cardPrinting;
}

async function printCardsNow() {
  const keys = (await db.config.get("cards_to_print")) || [];
  const printed = [];
  for (const key of keys) {
    const done = await db.get("done", key);
    if (!done) continue; // queued, or refused (it may be sent again)
    printed.push(key);
    if (done.printed) continue;
    await db.put("done", { ...done, answer: cards.stripAnswer(done.answer), printed: true });
    printCardReceipt(done, done.answer.data);
    flash(`Gift card ${done.number}: receipt printed`);
  }
  if (printed.length) await cardsToPrint((now) => now.filter((k) => !printed.includes(k)));
}

function printCardReceipt(write, d) {
  const reg = state.register || {};
  const line = (label, value) => el("tr", {}, el("td", { text: label }), el("td", { class: "num", text: value }));
  $("receipt").replaceChildren(
    el("h1", { text: reg.company_name || reg.name || "" }),
    reg.receipt_header ? el("p", { class: "pre", text: reg.receipt_header }) : null,
    el("p", { text: `Gift card ${d.code_in_full ? "sold" : "loaded"} ${write.number}` }),
    el("p", { text: new Date(write.at).toLocaleString() }),
    state.cashier ? el("p", { text: `Cashier: ${state.cashier.name}` }) : null,
    el("p", { class: "card-code", text: d.code }),
    d.code_in_full ? el("p", { text: "This code is the card: keep it safe. It is printed only once." }) : null,
    el(
      "table",
      { class: "sums" },
      el(
        "tbody",
        {},
        line(d.code_in_full ? "Amount" : "Loaded", fmt(dec.parse(d.amount, 2))),
        line("Balance", fmt(dec.parse(d.balance, 2))),
        d.expires_on ? line("Expires", d.expires_on) : null,
      ),
    ),
    reg.receipt_footer ? el("p", { class: "pre", text: reg.receipt_footer }) : null,
  );
  printNow();
  window.__printedCards = (window.__printedCards || 0) + 1;
}

// ---- park and resume --------------------------------------------------------------

async function park() {
  if (!state.cart.lines.length) return flash("The cart is empty", "error");
  await db.put("parked", { cart: state.cart, at: new Date().toISOString(), cashier: state.cashier?.name || null });
  state.cart = newCart();
  renderCart();
  showPoints(null);
  flash("Sale parked (F8 to resume)");
}

async function resumeDialog() {
  const parked = await db.all("parked");
  $("parked").replaceChildren(
    ...parked.map((p) => {
      const total = saleTotals({ lines: p.cart.lines.map((l) => ({ ...l, ...taxOf(l) })), discount: p.cart.discount }).total;
      const b = el("button", { type: "button", text: `${new Date(p.at).toLocaleTimeString()} · ${p.cart.lines.length} items · ${fmt(total)}` });
      b.addEventListener("click", async () => {
        if (state.cart.lines.length) await park();
        await db.del("parked", p.id);
        state.cart = p.cart;
        $("dlg-parked").close();
        renderCart();
        showPoints(state.cart.customer);
      });
      return el("li", {}, b);
    }),
  );
  if (!parked.length) $("parked").append(el("li", { class: "muted", text: "No parked sales" }));
  openDialog("dlg-parked");
}

// ---- needs attention ---------------------------------------------------------------

async function attentionDialog() {
  const items = await queue.attention();
  const rows = items.map((a) => el("li", {}, el("b", { text: `${a.kind} ${a.number || a.key}` }), el("div", { text: a.reason }), el("small", { text: new Date(a.at).toLocaleString() })));
  if (state.unauthorized) {
    for (const q of await queue.pending()) rows.push(el("li", {}, el("b", { text: `${q.kind} ${q.number || q.key}` }), el("div", { text: `refused: ${state.unauthorized}` })));
  }
  $("attention").replaceChildren(...rows);
  openDialog("dlg-attention");
}

$("attention-btn").addEventListener("click", attentionDialog);

// ---- shifts -----------------------------------------------------------------------

function nonCashModes() {
  return state.modes.filter((m) => m.code !== "cash");
}

async function shiftDialog() {
  $("shift-error").textContent = "";
  $("shift-report").textContent = "";
  $("shift-open").hidden = !!state.shift;
  $("shift-actions").hidden = !state.shift;
  const cats = (await db.config.get("expense_categories")) || [];
  $("cash-account").replaceChildren(
    ...nonCashModes().map((m) => el("option", { value: "mode:" + m.id, text: m.name })),
    ...cats.map((c) => el("option", { value: "expense:" + c.id, text: `Expense: ${c.name}` })),
  );
  $("count-modes").replaceChildren(
    ...state.modes.map((m) => el("label", {}, `${m.name} counted `, el("input", { inputmode: "decimal", autocomplete: "off", "data-mode": String(m.id), value: "" }))),
  );
  openDialog("dlg-shift");
}

async function queueShift(kind, path, body, extra = {}) {
  const reg = state.register;
  const n = await nextNumber(kind);
  const key = `register-${reg.prefix}-${kind}-${pad(n)}`;
  await queue.add({ key, kind, number: extra.number || `${reg.prefix}-${kind}-${pad(n)}`, path, body });
  renderStatus();
  flushNow();
}

$("shift-open").addEventListener("submit", async (e) => {
  e.preventDefault();
  const float = dec.tryParse($("shift-float").value || "0", 2);
  if (float === null || float < 0n) return ($("shift-error").textContent = "Float: an amount with at most 2 decimals");
  const reg = state.register;
  const n = await nextNumber("shift");
  const reference = `${reg.prefix}-S${pad(n)}`;
  // With the register API the shift runs on this register (its prefix) by default;
  // a plain key names its till.
  const body = { opening_float: dec.format(float, 2) };
  if (reg.register_api) body.reference = reference;
  else body.register = reg.name?.slice(0, 50) || reg.prefix;
  await queue.add({ key: `register-${reg.prefix}-shift-${pad(n)}`, kind: "shift-open", number: reference, path: "/shifts", body });
  state.shift = { reference, opened_at: new Date().toISOString(), float: dec.format(float, 2), cash: [] };
  await db.config.set("shift", state.shift);
  $("dlg-shift").close();
  renderStatus();
  flushNow();
});

$("shift-cash").addEventListener("submit", async (e) => {
  e.preventDefault();
  const amount = dec.tryParse($("cash-amount").value, 2);
  const reason = $("cash-reason").value.trim();
  const direction = new FormData(e.target).get("direction");
  if (amount === null || amount <= 0n) return ($("shift-error").textContent = "Amount: above 0, at most 2 decimals");
  if (!reason) return ($("shift-error").textContent = "Give a reason");
  const [kind, id] = ($("cash-account").value || "").split(":");
  const body = { direction, amount: dec.format(amount, 2), reason };
  if (kind === "mode") body.payment_mode_id = Number(id);
  else if (kind === "expense") body.expense_category_id = Number(id);
  await queueShift("cash", `/shifts/${encodeURIComponent(state.shift.reference)}/cash`, body);
  state.shift.cash.push({ direction, amount: body.amount, reason });
  await db.config.set("shift", state.shift);
  $("cash-amount").value = "";
  $("cash-reason").value = "";
  $("shift-report").textContent = `Cash ${direction} ${fmt(amount)} recorded.`;
});

// The figures this register rang up in the shift, from its own history: the X
// report offline (online the server's report is shown).
async function localReport(shift) {
  const sales = (await db.all("history")).filter((h) => h.shift === shift.reference && h.kind !== "return");
  const byMode = new Map();
  let total = 0n;
  for (const s of sales) {
    total += dec.parse(s.total, 2);
    for (const t of s.tenders) byMode.set(t.mode, (byMode.get(t.mode) || 0n) + dec.parse(t.applied, 2));
  }
  const lines = [`Shift ${shift.reference}`, `Opened ${new Date(shift.opened_at).toLocaleString()}`, `Float ${fmt(dec.parse(shift.float, 2))}`, `Sales ${sales.length}, total ${fmt(total)}`];
  for (const [m, a] of byMode) lines.push(`  ${m}: ${fmt(a)}`);
  for (const c of shift.cash) lines.push(`Cash ${c.direction} ${fmt(dec.parse(c.amount, 2))} (${c.reason})`);
  return lines.join("\n");
}

// The server's X (open) or Z (closed) report as text. The X report leaves out what
// the drawer should hold: the count at the close is blind.
async function serverReport(ref) {
  if (isOffline()) return null;
  await flushNow();
  const r = await api.pub(`/shifts/${encodeURIComponent(ref)}`);
  if (!r.ok) return null;
  return reportText(r.body.data);
}

function reportText(d) {
  const m = (v) => (v === null || v === undefined ? "" : fmt(dec.parse(v, 2)));
  const z = d.report === "Z";
  const lines = [`${z ? "Z" : "X"} report · shift ${d.reference || d.id} (${d.status})`];
  if (d.opened_at) lines.push(`Opened ${new Date(d.opened_at).toLocaleString()}`);
  if (d.closed_at) lines.push(`Closed ${new Date(d.closed_at).toLocaleString()}`);
  if (d.opening_float !== undefined) lines.push(`Float ${m(d.opening_float)}`);
  for (const [label, o] of [["Sales", d.sales], ["Returns", d.returns], ["Voids", d.voids]]) {
    if (o) lines.push(`${label} ${o.count}: total ${m(o.total)}, tax ${m(o.tax_amount)}`);
  }
  for (const t of d.tax_by_rate || []) lines.push(`  Tax ${t.rate}%: net ${m(t.net)}, tax ${m(t.tax)}`);
  for (const t of d.tenders || []) lines.push(`  ${t.name || t.code}: taken ${m(t.taken)}, refunded ${m(t.refunded)}, net ${m(t.net)}`);
  for (const c of d.cash_movements || []) lines.push(`Cash ${c.direction} ${m(c.amount)} (${c.reason})`);
  if (z) {
    for (const e of d.expected || []) lines.push(`${e.name || e.code}: expected ${m(e.expected)}, counted ${m(e.counted)}, difference ${m(e.difference)}`);
    lines.push(`Over/short ${m(d.over_short)}`);
  }
  return lines.join("\n");
}

$("shift-x").addEventListener("click", async () => {
  const text = (await serverReport(state.shift.reference)) || (await localReport(state.shift)) + "\n(this register's figures; offline)";
  $("shift-report").textContent = text;
});

$("shift-close").addEventListener("submit", async (e) => {
  e.preventDefault();
  const counted = [];
  for (const input of $("count-modes").querySelectorAll("input")) {
    if (!input.value.trim()) continue;
    const v = dec.tryParse(input.value, 2);
    if (v === null || v < 0n) return ($("shift-error").textContent = "Counts: amounts with at most 2 decimals");
    counted.push({ payment_mode_id: Number(input.dataset.mode), amount: dec.format(v, 2) });
  }
  if (!counted.length) return ($("shift-error").textContent = "Count at least the cash");
  const shift = state.shift;
  await queueShift("close", `/shifts/${encodeURIComponent(shift.reference)}/close`, { counted });
  state.shift = null;
  await db.config.set("shift", null);
  const report = ((await serverReport(shift.reference)) || (await localReport(shift)) + "\n(this register's figures; the server's Z report follows when online)") + "\nCounted:\n" + counted.map((c) => `  ${state.modes.find((m) => m.id === c.payment_mode_id)?.name}: ${fmt(dec.parse(c.amount, 2))}`).join("\n");
  $("shift-report").textContent = report;
  $("receipt").replaceChildren(el("h1", { text: "Z report" }), el("pre", { text: report }));
  window.print();
  $("shift-open").hidden = false;
  $("shift-actions").hidden = true;
  renderStatus();
});

// ---- returns ----------------------------------------------------------------------

let returning = null;

function returnDialog() {
  $("return-error").textContent = "";
  $("return-form").hidden = true;
  $("return-number").value = "";
  $("free-mode").replaceChildren(...state.modes.map((m) => el("option", { value: m.id, text: m.name })));
  $("free-manager").replaceChildren(...state.cashiers.map((c) => el("option", { value: c.id, text: c.name })));
  $("free-pin").value = "";
  openDialog("dlg-return");
  $("return-number").focus();
}

$("return-find").addEventListener("submit", (e) => {
  e.preventDefault();
  findReturn();
});

async function findReturn() {
  const number = $("return-number").value.trim();
  if (!number) return;
  $("return-error").textContent = "";
  if (isOffline()) return ($("return-error").textContent = "Returns against an invoice need the connection");
  const r = await api.pub(`/sales/${encodeURIComponent(number)}`);
  if (!r.ok) return ($("return-error").textContent = r.status === 404 ? `No sale ${number}` : api.reason(r));
  returning = r.body.data;
  const items = returning.items || returning.product_items || [];
  $("return-lines").replaceChildren(
    ...items.map((it, i) =>
      el("tr", {}, el("td", { text: it.name || it.product_name || "" }), el("td", { class: "num", text: String(it.quantity) }), el("td", {}, el("input", { inputmode: "decimal", value: "0", autocomplete: "off", "data-i": String(i) }))),
    ),
  );
  $("return-mode").replaceChildren(...state.modes.map((m) => el("option", { value: m.id, text: m.name })));
  $("return-form").hidden = false;
}

$("return-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const items = returning.items || returning.product_items || [];
  const lines = [];
  let refund = 0n;
  for (const input of $("return-lines").querySelectorAll("input")) {
    const q = dec.tryParse(input.value || "0", 4);
    if (q === null || q < 0n) return ($("return-error").textContent = "Quantities: numbers with at most 4 decimals");
    if (q === 0n) continue;
    const it = items[Number(input.dataset.i)];
    lines.push({ product_id: it.product_id ?? it.id, quantity: dec.plain(q, 4), unit_price: String(it.unit_price) });
    // Refund what the line cost the customer, in proportion (the server's own
    // figure is on the return's answer).
    const sold = dec.parse(it.quantity, 4);
    const paid = dec.parse(it.total ?? it.subtotal ?? "0", 2);
    refund += dec.divRound(paid * q, sold);
  }
  if (!lines.length) return ($("return-error").textContent = "Return at least one item");
  const reg = state.register;
  const n = await nextNumber("return");
  const number = `${reg.prefix}-RT${pad(n)}`;
  const body = { user_id: returning.user_id ?? returning.customer?.id ?? walkIn()?.id, order_date: new Date().toISOString(), items: lines, invoice_number: returning.invoice_number, all_payments: [{ amount: dec.format(refund, 2), payment_mode_id: Number($("return-mode").value) }] };
  if (reg.register_api && state.cashier) body.staff_member = state.cashier.id;
  await queue.add({ key: `register-${reg.prefix}-return-${pad(n)}`, kind: "return", number, path: "/sales-returns", body });
  $("dlg-return").close();
  flash(`Return against ${returning.invoice_number} queued (refund ${fmt(refund)})`);
  renderStatus();
  flushNow();
});

// A return without its invoice: the product at its shelf price (the most the server
// refunds without the sale on record), approved on this register by someone who may
// refund without an invoice (an owner or manager: may_refund_without_invoice), with
// their PIN checked here, so it works offline. The approver is the return's
// staff_member.
$("return-free").addEventListener("submit", async (e) => {
  e.preventDefault();
  $("return-error").textContent = "";
  const code = $("free-code").value.trim().toLowerCase();
  const p = state.codes.get(code) || state.list.find((x) => x.item_code?.toLowerCase() === code);
  if (!p) return ($("return-error").textContent = `No product ${$("free-code").value.trim()}`);
  const q = dec.tryParse($("free-qty").value, 4);
  if (q === null || q <= 0n) return ($("return-error").textContent = "Quantity: a number above 0 with at most 4 decimals");
  const approver = state.cashiers.find((c) => String(c.id) === $("free-manager").value);
  if (!approver) return ($("return-error").textContent = "A manager must approve a return without an invoice");
  const checked = await pin.check(approver, $("free-pin").value);
  $("free-pin").value = "";
  if (!checked.ok) {
    return ($("return-error").textContent = checked.locked_until ? `${approver.name} is locked on this register` : `Wrong PIN. ${checked.left} ${checked.left === 1 ? "try" : "tries"} left.`);
  }
  if (!approver.may_refund_without_invoice) return ($("return-error").textContent = `${approver.name} may not approve a return without an invoice: a manager's PIN`);
  const customer = walkIn();
  if (!customer) return ($("return-error").textContent = "No walk-in customer in the catalog");
  const price = String(p.sales_price);
  const quantity = dec.plain(q, 4);
  const t = saleTotals({ lines: [{ quantity, unit_price: price, discount_rate: "0", ...taxOf({ tax_id: p.tax_id ?? null }) }], discount: "0" });
  const reg = state.register;
  const n = await nextNumber("return");
  const number = `${reg.prefix}-RT${pad(n)}`;
  const body = { user_id: customer.id, order_date: new Date().toISOString(), items: [{ product_id: p.id, quantity, unit_price: price }], all_payments: [{ amount: dec.format(t.total, 2), payment_mode_id: Number($("free-mode").value) }], notes: `Without invoice, approved by ${approver.name}` };
  if (reg.register_api) body.staff_member = approver.id;
  await queue.add({ key: `register-${reg.prefix}-return-${pad(n)}`, kind: "return", number, path: "/sales-returns", body });
  $("dlg-return").close();
  $("free-code").value = "";
  $("free-qty").value = "1";
  flash(`Return ${number} of ${p.name} queued (refund ${fmt(t.total)}, approved by ${approver.name})`);
  renderStatus();
  flushNow();
});

// ---- keyboard ---------------------------------------------------------------------

document.addEventListener("keydown", (e) => {
  if ($("screen-sell").hidden) return;
  const open = document.querySelector("dialog[open]");
  const keys = {
    F2: () => $("search").focus(),
    F3: () => editLine(state.cart.lines.length - 1),
    F4: customerDialog,
    F6: orderDiscount,
    F7: park,
    F8: resumeDialog,
    F9: payDialog,
  };
  const alt = { p: reprint, r: returnDialog, g: giftCardDialog, s: shiftDialog, c: changeCashier, n: attentionDialog, y: () => syncNow(false) };
  let action = null;
  if (!e.ctrlKey && !e.metaKey && !e.altKey && keys[e.key]) action = keys[e.key];
  else if (e.altKey && alt[e.key.toLowerCase()]) action = alt[e.key.toLowerCase()];
  if (!action || (open && e.key !== "F2")) return;
  e.preventDefault();
  action();
});

const buttons = {
  pay: payDialog,
  "btn-customer": customerDialog,
  "btn-discount": orderDiscount,
  "btn-park": park,
  "btn-resume": resumeDialog,
  "btn-reprint": reprint,
  "btn-return": returnDialog,
  "btn-giftcard": giftCardDialog,
  "btn-shift": shiftDialog,
  "btn-cashier": changeCashier,
  "btn-sync": () => syncNow(false),
};
for (const [id, fn] of Object.entries(buttons)) $(id).addEventListener("click", () => fn());

// For tests and the bench: the running app's state, read-only by convention.
window.__register = { state, search, flush: flushNow, sync: syncNow };

start().catch((e) => {
  document.body.dataset.error = String(e);
  console.error(e);
});
