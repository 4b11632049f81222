// Client of the /api/v1 JSON API: session cookie plus the CSRF header on
// every request that changes state.

/** The value of the sj_csrf cookie, echoed in X-CSRF-Token. */
export function csrfToken() {
  const m = document.cookie.match(/(?:^|;\s*)sj_csrf=([^;]*)/);
  return m ? decodeURIComponent(m[1]) : "";
}

/**
 * An API error: HTTP status, message and the per-field messages, in English
 * (fields) and as message codes (fieldCodes: field → {code, args}); the
 * pages show fieldTexts(e) (i18n.js), the fields in the reader's language.
 */
export class ApiError extends Error {
  constructor(status, body) {
    super((body && body.error) || `HTTP ${status}`);
    this.status = status;
    this.fields = (body && body.fields) || {};
    this.fieldCodes = (body && body.field_codes) || {};
  }
}

const listeners = new Set();

/** onUnauthorized registers fn, called when a request answers 401. */
export function onUnauthorized(fn) { listeners.add(fn); }

/**
 * api sends one request. body (optional) is sent as JSON. It resolves to the
 * decoded JSON and rejects with ApiError (status 0 when the network failed).
 */
export async function api(method, path, body) {
  const opts = { method, headers: { "Accept": "application/json" }, credentials: "same-origin" };
  if (method !== "GET" && method !== "HEAD") opts.headers["X-CSRF-Token"] = csrfToken();
  if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch("/api/v1" + path, opts);
  } catch (e) {
    throw new ApiError(0, { error: e.message || "network error" });
  }
  const data = await res.json().catch(() => ({}));
  if (!res.ok) {
    const err = new ApiError(res.status, data);
    if (res.status === 401 && path !== "/login") listeners.forEach(fn => fn(err));
    throw err;
  }
  return data;
}

/** qs builds a query string from the defined, non-empty values of obj. */
export function qs(obj) {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(obj)) if (v !== undefined && v !== null && v !== "") p.set(k, String(v));
  const s = p.toString();
  return s ? "?" + s : "";
}

/**
 * runsSince pages through GET /runs (newest first) until a run scheduled
 * before since (ms) or maxRuns runs; filter adds job_id / status.
 */
export async function runsSince(since, filter = {}, maxRuns = 10000) {
  const out = [];
  let before = "";
  for (;;) {
    const page = await api("GET", "/runs" + qs({ ...filter, before, limit: 1000 }));
    out.push(...page.runs);
    const last = page.runs[page.runs.length - 1];
    if (!page.next_before || !last || Date.parse(last.scheduled_at) < since || out.length >= maxRuns) break;
    before = page.next_before;
  }
  return out;
}

const rank = { viewer: 1, operator: 2, admin: 3 };

/** can reports whether role has at least the rights of need. */
export function can(role, need) { return (rank[role] || 0) >= (rank[need] || 99); }
