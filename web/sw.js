/* Service worker: the app and Pyodide from a versioned cache, for a faster second visit and offline use.
 *
 * `python -m judge build` replaces the placeholder below with this build's id and the list of
 * files to precache (every file of the site, Pyodide included in `self` mode). A new build has a
 * new id, so a new worker installs, precaches, and deletes the old build's cache when it takes over.
 * In `cdn` mode the Pyodide files come from the CDN: they are cached the first time they are fetched.
 *
 * Responses get the cross-origin isolation headers added if the host did not send them, so the
 * page can use SharedArrayBuffer (fast Stop) even on static hosts that cannot set headers (after
 * the first load, once this worker controls the page).
 */
/*__PRECACHE__*/
const CACHE = `pp-judge-${SETTINGS.build}`;
const RUNTIME = "pp-judge-runtime";
const SCOPE = new URL("./", self.location.href).pathname;
// Same-origin folders (Pyodide's files: versioned, served with a year-long immutable Cache-Control)
// that this worker leaves to the browser's HTTP cache when that cache holds all of them. V8 then
// reuses its compiled WebAssembly (pyodide.asm.wasm) from the first repeat visit on, which it does
// not do for a response served from Cache Storage, nor for one passed through this worker
// (bench/browser.py measured both: the first repeat visit was about a second slower). Whether the
// HTTP cache holds them is checked at every page load (`only-if-cached` requests, no network). The
// last answer is kept (in this build's cache, so it survives this worker being stopped) and used
// while the next check runs: the engine's worker asks for Pyodide's files a few milliseconds after
// the page loads, before a check could finish, and the files it got from this worker's cache then
// were slower to read and their WebAssembly was compiled again. Until a check passed, offline, or
// when one failed (an evicted file, a private window's small cache), they come from this worker's
// cache like every other file.
const HTTP_CACHED = (SETTINGS.httpCached || []).map((folder) => SCOPE + folder);
const HTTP_CACHED_URLS = SETTINGS.precache.filter((u) => (SETTINGS.httpCached || []).some((f) => u.startsWith(f)));
const HOLDS_KEY = new URL("__http-cache-holds", self.location.href).href; // never a real file
let httpCacheHolds = false;
const lastAnswer = caches.open(CACHE).then((cache) => cache.match(HOLDS_KEY))
  .then((found) => { if (found) httpCacheHolds = true; }, () => {});

async function checkHttpCache() {
  if (!HTTP_CACHED_URLS.length) return;
  let holds = false;
  try {
    const found = await Promise.all(HTTP_CACHED_URLS.map(async (url) => {
      const response = await fetch(url, { cache: "only-if-cached", mode: "same-origin" });
      if (response.body) response.body.cancel().catch(() => {});
      return response.ok;
    }));
    holds = found.every(Boolean);
  } catch (err) {
    holds = false;
  }
  await lastAnswer;
  httpCacheHolds = holds;
  try {
    const cache = await caches.open(CACHE);
    if (holds) await cache.put(HOLDS_KEY, new Response("1"));
    else await cache.delete(HOLDS_KEY);
  } catch (err) {
    // the answer is kept in memory only
  }
}

self.addEventListener("install", (event) => {
  event.waitUntil((async () => {
    const cache = await caches.open(CACHE);
    // one by one: a 17 MB precache must not open dozens of parallel downloads
    for (const url of SETTINGS.precache) {
      await notBusy();
      const request = new Request(url, { cache: "no-cache" });
      const response = await fetch(request);
      if (!response.ok) throw new Error(`precache ${url}: HTTP ${response.status}`);
      await cache.put(url, response);
    }
    // The first install takes over at once (offline from the first visit on). An update waits until
    // no page runs the old build, or until the page asks (its "Reload to update" banner), so a
    // running page never loses the files of its own build.
    if (!self.registration.active) await self.skipWaiting();
  })());
});

// The page says "busy" while a run is in progress and "idle" after it: the precache waits between
// files meanwhile, so its reads and writes do not take a busy machine's time from the run. A page
// that went away without saying "idle" holds it back at most a minute per file.
let busy = false;
let busyWaiters = [];
function notBusy() {
  if (!busy) return Promise.resolve();
  return new Promise((resolve) => {
    busyWaiters.push(resolve);
    setTimeout(resolve, 60000);
  });
}

self.addEventListener("message", (event) => {
  if (event.data === "skip-waiting") self.skipWaiting();
  else if (event.data === "busy") busy = true;
  else if (event.data === "idle") {
    busy = false;
    busyWaiters.splice(0).forEach((resolve) => resolve());
  }
});

self.addEventListener("activate", (event) => {
  event.waitUntil((async () => {
    for (const key of await caches.keys()) {
      if (key.startsWith("pp-judge-") && key !== CACHE && key !== RUNTIME) await caches.delete(key);
    }
    await self.clients.claim();
    await checkHttpCache(); // so that the next visit already knows
  })());
});

function isolate(response) {
  if (response.type === "opaque" || response.status === 0) return response;
  if (response.headers.get("Cross-Origin-Embedder-Policy")) return response;
  const headers = new Headers(response.headers);
  headers.set("Cross-Origin-Opener-Policy", "same-origin");
  headers.set("Cross-Origin-Embedder-Policy", "require-corp");
  headers.set("Cross-Origin-Resource-Policy", "cross-origin");
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET") return;
  const url = new URL(request.url);
  const sameOrigin = url.origin === self.location.origin;
  const fromCdn = SETTINGS.cdnPrefix && request.url.startsWith(SETTINGS.cdnPrefix);
  if (!sameOrigin && !fromCdn) return;
  if (sameOrigin && request.mode === "navigate") event.waitUntil(checkHttpCache());
  if (sameOrigin && httpCacheHolds && self.navigator.onLine && HTTP_CACHED.some((f) => url.pathname.startsWith(f))) {
    return; // the browser answers from its HTTP cache (no network: the files are immutable)
  }
  event.respondWith((async () => {
    const cache = await caches.open(CACHE);
    let key = request;
    if (sameOrigin && request.mode === "navigate") key = new URL("./", self.location.href).href;
    const hit = await cache.match(key, { ignoreSearch: sameOrigin && request.mode === "navigate" });
    if (hit) return isolate(hit);
    if (fromCdn) {
      const runtime = await caches.open(RUNTIME);
      const cached = await runtime.match(request);
      if (cached) return cached;
      const response = await fetch(request);
      // (a no-cors request from the CDN gets an opaque response: usable, and cached as well)
      if (response.ok || response.type === "opaque") await runtime.put(request, response.clone());
      return response;
    }
    return isolate(await fetch(request));
  })());
});
