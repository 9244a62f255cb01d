// A small promise wrapper over IndexedDB, and the register's stores.
//
//   config      key/value: the credential, the register, sync tokens, last sync,
//               the invoice and queue counters, cashier locks, settings
//   products    by id; indexes barcodes (multi-entry), item_code
//   customers, modes, taxes, units, cashiers, promotions, categories   by id
//   queue       the writes waiting to be posted, by seq (the order they were made);
//               unique index on key (the Idempotency-Key)
//   attention   writes the server refused, by key (never dropped)
//   done        the answers of posted writes, by key (the sale's id for reprint)
//   parked      parked carts, by id
//   history     sales rung up here (for reprint and the X report), by number

const NAME = "tillbook-register";
const VERSION = 3; // 2: the promotions store; 3: categories (their parents)

let opened = null;

export function open() {
  if (opened) return opened;
  opened = new Promise((resolve, reject) => {
    const req = indexedDB.open(NAME, VERSION);
    req.onupgradeneeded = (event) => {
      const db = req.result;
      if (event.oldVersion < 1) upgradeToOne(db);
      for (const s of ["promotions", "categories"]) if (!db.objectStoreNames.contains(s)) db.createObjectStore(s, { keyPath: "id" });
    };
    req.onsuccess = () => {
      const db = req.result;
      // Another tab upgrading: step aside rather than block it.
      db.onversionchange = () => db.close();
      resolve(db);
    };
    req.onerror = () => reject(req.error);
  });
  return opened;
}

// The stores of the first version (a device paired before promotions keeps them).
function upgradeToOne(db) {
  {
      db.createObjectStore("config");
      const products = db.createObjectStore("products", { keyPath: "id" });
      products.createIndex("barcodes", "barcodes", { multiEntry: true });
      products.createIndex("item_code", "item_code");
      for (const s of ["customers", "modes", "taxes", "units", "cashiers"]) db.createObjectStore(s, { keyPath: "id" });
      const queue = db.createObjectStore("queue", { keyPath: "seq" });
      queue.createIndex("key", "key", { unique: true });
      db.createObjectStore("attention", { keyPath: "key" });
      db.createObjectStore("done", { keyPath: "key" });
      db.createObjectStore("parked", { keyPath: "id", autoIncrement: true });
      db.createObjectStore("history", { keyPath: "number" });
  }
}

function done(req) {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

function finished(tx) {
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onabort = tx.onerror = () => reject(tx.error || new Error("transaction aborted"));
  });
}

export async function get(store, key) {
  const db = await open();
  return done(db.transaction(store).objectStore(store).get(key));
}

export async function all(store, index, query) {
  const db = await open();
  const s = db.transaction(store).objectStore(store);
  return done((index ? s.index(index) : s).getAll(query));
}

export async function count(store) {
  const db = await open();
  return done(db.transaction(store).objectStore(store).count());
}

export async function put(store, value, key) {
  const db = await open();
  const tx = db.transaction(store, "readwrite");
  tx.objectStore(store).put(value, key);
  return finished(tx);
}

export async function del(store, key) {
  const db = await open();
  const tx = db.transaction(store, "readwrite");
  tx.objectStore(store).delete(key);
  return finished(tx);
}

export async function clear(store) {
  const db = await open();
  const tx = db.transaction(store, "readwrite");
  tx.objectStore(store).clear();
  return finished(tx);
}

// Several stores in one transaction: fn(tx) queues its requests; resolves once the
// transaction has committed (so a write is on disk before the caller goes on).
export async function atomic(stores, fn) {
  const db = await open();
  const tx = db.transaction(stores, "readwrite");
  let result;
  try {
    result = fn(tx);
  } catch (e) {
    tx.abort();
    throw e;
  }
  await finished(tx);
  return result;
}

// Inside atomic(): read a value (a promise resolved within the transaction).
export function txGet(tx, store, key) {
  return done(tx.objectStore(store).get(key));
}

export const config = {
  get: (name) => get("config", name),
  set: (name, value) => put("config", value, name),
};

// Upsert many records and delete tombstones, in one transaction.
export async function apply(store, records, shape = (r) => r) {
  const db = await open();
  const tx = db.transaction(store, "readwrite");
  const s = tx.objectStore(store);
  for (const r of records) {
    if (r.archived) s.delete(r.id);
    else s.put(shape(r));
  }
  return finished(tx);
}

// Wipe everything (unpairing a revoked register keeps nothing but the queue: the
// caller chooses what to clear).
export async function wipe(stores) {
  for (const s of stores) await clear(s);
}
