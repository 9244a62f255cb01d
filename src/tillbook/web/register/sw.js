// The register's service worker: the app shell (page, modules, styles, icon) from
// its own cache first, so the register opens and sells with the network gone.
// API responses are never cached: they go to the network, and the register keeps
// its data in IndexedDB. The cache name carries a digest of the shell (written in
// by the server), so a release installs a fresh cache and drops the old ones.

const VERSION = "__VERSION__";
const CACHE = `tillbook-register-${VERSION}`;
const SHELL = ["__ASSETS__"];

self.addEventListener("install", (event) => {
  event.waitUntil(
    caches
      .open(CACHE)
      .then((cache) => cache.addAll(SHELL.map((u) => new Request(u, { cache: "reload" }))))
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((names) => Promise.all(names.filter((n) => n.startsWith("tillbook-register-") && n !== CACHE).map((n) => caches.delete(n))))
      .then(() => self.clients.claim()),
  );
});

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET") return;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return;
  if (url.pathname.startsWith("/api/")) return; // never cached
  if (url.pathname !== "/register" && url.pathname !== "/register/" && !url.pathname.startsWith("/register/")) return;
  const key = url.pathname === "/register/" ? "/register" : url.pathname;
  event.respondWith(
    caches.open(CACHE).then(async (cache) => {
      const hit = await cache.match(key, { ignoreSearch: true });
      if (hit) return hit;
      const response = await fetch(request);
      if (response.ok && SHELL.includes(key)) cache.put(key, response.clone());
      return response;
    }),
  );
});
