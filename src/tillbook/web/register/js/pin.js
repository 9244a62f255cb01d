// Cashier PINs, checked offline: PBKDF2-HMAC-SHA256 with the salt and iteration
// count the server stored (register-contract.md "PINs"), compared in constant time.
// Five wrong tries lock that cashier on this register for five minutes.

import { config } from "./db.js";

export const TRIES = 5;
export const LOCK_MS = 5 * 60 * 1000;

function b64(text) {
  const raw = atob(text);
  const out = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
  return out;
}

export async function derive(pin, salt, iterations) {
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(pin), "PBKDF2", false, ["deriveBits"]);
  const bits = await crypto.subtle.deriveBits({ name: "PBKDF2", hash: "SHA-256", salt, iterations }, key, 256);
  return new Uint8Array(bits);
}

function same(a, b) {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i] ^ b[i];
  return diff === 0;
}

// {ok} or {ok: false, locked_until, left}
export async function check(cashier, pin, now = Date.now()) {
  const lockName = `lock:${cashier.id}`;
  const lock = (await config.get(lockName)) || { fails: 0, until: 0 };
  if (lock.until > now) return { ok: false, locked_until: lock.until, left: 0 };
  const p = cashier.pin;
  if (!p || p.algorithm !== "PBKDF2-SHA256") return { ok: false, left: TRIES - lock.fails, unsupported: true };
  const got = await derive(pin, b64(p.salt), p.iterations);
  if (same(got, b64(p.hash))) {
    await config.set(lockName, { fails: 0, until: 0 });
    return { ok: true };
  }
  const fails = (lock.until && lock.until <= now ? 0 : lock.fails) + 1;
  const until = fails >= TRIES ? now + LOCK_MS : 0;
  await config.set(lockName, { fails: until ? 0 : fails, until });
  return { ok: false, locked_until: until || null, left: until ? 0 : TRIES - fails };
}
