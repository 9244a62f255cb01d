// The write queue (DESIGN §15): every write is stored in IndexedDB first, then
// posted in order, one at a time, with its Idempotency-Key; it is done only once
// the server's answer is stored. A refusal (a 4xx but 401, 408 and 429) moves it to
// "needs attention" with the reason, never dropped; network errors and 5xx retry
// with backoff, and nothing after it is posted before it (order matters: a sale
// names the shift and the customer written before it).

import * as api from "./api.js";
import * as db from "./db.js";

const RETRY_STATUSES = new Set([401, 408, 409, 425, 429]);
const MAX_BACKOFF = 60000;

// Add a write: {key, kind, number, path, body}. Answers the stored entry.
export async function add(write) {
  return db.atomic(["queue", "config"], (tx) => {
    const entry = { ...write, created: new Date().toISOString(), tries: 0, next_at: 0 };
    const cfg = tx.objectStore("config");
    const req = cfg.get("queue_seq");
    req.onsuccess = () => {
      entry.seq = (req.result || 0) + 1;
      cfg.put(entry.seq, "queue_seq");
      tx.objectStore("queue").add(entry);
    };
    return entry;
  });
}

export const pending = () => db.all("queue");
export const attention = () => db.all("attention");

// "@register-R1-customer-000003.id": a value only known once an earlier write
// is answered (a customer created offline, then sold to).
async function resolve(value) {
  if (typeof value === "string" && value.startsWith("@")) {
    const [key, field] = value.slice(1).split("#");
    const answer = await db.get("done", key);
    if (!answer) throw new Unresolved(`${key} is not recorded (refused or still queued)`);
    return pick(answer.answer, field);
  }
  if (Array.isArray(value)) return Promise.all(value.map(resolve));
  if (value && typeof value === "object") {
    const out = {};
    for (const [k, v] of Object.entries(value)) out[k] = await resolve(v);
    return out;
  }
  return value;
}

function pick(answer, field) {
  const d = answer && answer.data !== undefined ? answer.data : answer;
  return d ? d[field || "id"] : undefined;
}

class Unresolved extends Error {}

let running = null;
let stopped = false;

export function stop() {
  stopped = true;
}

// Post what waits, in order. Answers {posted, refused, waiting, unauthorized,
// offline}. One flush at a time (and one tab at a time where Web Locks exist).
export function flush(hooks = {}) {
  if (running) return running;
  const work = () => drain(hooks);
  running = (navigator.locks ? navigator.locks.request("tillbook-register-queue", work) : work()).finally(() => {
    running = null;
  });
  return running;
}

async function drain(hooks) {
  const result = { posted: 0, refused: 0, waiting: 0, unauthorized: false, offline: false };
  for (;;) {
    if (stopped) break;
    const entries = await db.all("queue");
    if (!entries.length) break;
    const entry = entries[0];
    if (entry.next_at > Date.now()) {
      result.waiting = entries.length;
      break;
    }
    let body;
    try {
      body = await resolve(entry.body);
    } catch (e) {
      if (!(e instanceof Unresolved)) throw e;
      await refuse(entry, `depends on ${e.message}`, 0);
      result.refused++;
      if (hooks.onChange) await hooks.onChange();
      continue;
    }
    const answer = await api.pub(entry.path, { method: "POST", body, headers: { "Idempotency-Key": entry.key } });
    if (answer.ok) {
      await db.atomic(["queue", "done", "history"], (tx) => {
        tx.objectStore("done").put({ key: entry.key, kind: entry.kind, number: entry.number, answer: answer.body, at: new Date().toISOString() });
        tx.objectStore("queue").delete(entry.seq);
        if (entry.kind === "sale") {
          const h = tx.objectStore("history");
          const req = h.get(entry.number);
          req.onsuccess = () => {
            if (req.result) h.put({ ...req.result, order_id: answer.body.order_id, posted: true });
          };
        }
      });
      result.posted++;
      if (hooks.onPosted) await hooks.onPosted(entry, answer);
      if (hooks.onChange) await hooks.onChange();
      continue;
    }
    if (answer.status === 401) {
      // The credential is refused (a revoked register): nothing more can be posted;
      // the queue stays on the device, shown as refused.
      await retryLater(entry, api.reason(answer), MAX_BACKOFF);
      result.unauthorized = true;
      result.reason = api.reason(answer);
      break;
    }
    if (answer.network || answer.status >= 500 || RETRY_STATUSES.has(answer.status)) {
      const after = Number(answer.headers && answer.headers.get("Retry-After"));
      const wait = after > 0 ? after * 1000 : Math.min(MAX_BACKOFF, 1000 * 2 ** Math.min(entry.tries, 6));
      await retryLater(entry, answer.network ? "offline" : api.reason(answer), wait);
      result.offline = answer.network;
      result.waiting = entries.length;
      break;
    }
    await refuse(entry, api.reason(answer), answer.status);
    result.refused++;
    if (hooks.onChange) await hooks.onChange();
  }
  return result;
}

async function retryLater(entry, reason, wait) {
  await db.put("queue", { ...entry, tries: entry.tries + 1, next_at: Date.now() + wait, last_error: reason });
}

// Retry now: every entry's backoff is forgotten (the connection came back).
export async function wake() {
  for (const e of await db.all("queue")) if (e.next_at) await db.put("queue", { ...e, next_at: 0 });
}

async function refuse(entry, reason, status) {
  await db.atomic(["queue", "attention"], (tx) => {
    tx.objectStore("attention").put({ ...entry, reason, status, at: new Date().toISOString() });
    tx.objectStore("queue").delete(entry.seq);
  });
}

// Send a write needing attention once more (after the cause was fixed in the back
// office): it goes to the end of the queue under the same key.
export async function requeue(key) {
  const entry = await db.get("attention", key);
  if (!entry) return;
  const { reason, status, at, seq, ...write } = entry;
  await db.del("attention", key);
  await add(write);
}
