// Calls to the API with the register's credential (public API) or a bearer token
// (pairing, admin API). Answers {status, ok, body, network} and never throws for a
// network failure: the caller decides (the queue retries, the UI says offline).

const PUBLIC = "/api/v1/public";
const ADMIN = "/api/v1/admin";

let credential = null;

export function useCredential(c) {
  credential = c;
}

async function call(url, { method = "GET", body, headers = {}, timeout = 15000 } = {}) {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeout);
  try {
    const response = await fetch(url, {
      method,
      headers: { Accept: "application/json", ...(body !== undefined ? { "Content-Type": "application/json" } : {}), ...headers },
      body: body !== undefined ? JSON.stringify(body) : undefined,
      signal: controller.signal,
      cache: "no-store",
      credentials: "omit",
    });
    let parsed = null;
    const text = await response.text();
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = { message: text.slice(0, 200) };
    }
    return { status: response.status, ok: response.ok, body: parsed, headers: response.headers, network: false };
  } catch (e) {
    return { status: 0, ok: false, body: null, network: true, error: String(e) };
  } finally {
    clearTimeout(timer);
  }
}

export function pub(path, options = {}) {
  if (!credential) return Promise.resolve({ status: 0, ok: false, network: false, body: { message: "not paired" } });
  const headers = { "X-Service-Public-Key": credential.public_key, "X-Service-Secret-Key": credential.secret_key, ...(options.headers || {}) };
  return call(PUBLIC + path, { ...options, headers });
}

export function admin(path, token, options = {}) {
  const headers = { ...(token ? { Authorization: `Bearer ${token}` } : {}), ...(options.headers || {}) };
  return call(ADMIN + path, { ...options, headers });
}

// The reason a refusal gives, one line: the message and each field's first error.
export function reason(answer) {
  const b = answer.body || {};
  let text = b.message || `HTTP ${answer.status}`;
  if (b.errors && typeof b.errors === "object") {
    const parts = Object.entries(b.errors).map(([f, m]) => `${f}: ${Array.isArray(m) ? m[0] : m}`);
    if (parts.length) text += " (" + parts.join("; ") + ")";
  }
  return text;
}
