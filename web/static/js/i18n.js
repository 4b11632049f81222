// Strings and formatting. Every visible string comes from the dictionaries
// in /ui/i18n/<lang>.json; the choice of language and of UTC display is
// kept in localStorage.

export const LANGS = ["en", "zh-CN"];
const dicts = {};
let lang = "en";
let utc = false;
const changeHandlers = new Set();

function stored(key, fallback) {
  try { return localStorage.getItem(key) ?? fallback; } catch { return fallback; }
}
function store(key, value) {
  try { localStorage.setItem(key, value); } catch { /* private mode: not persisted */ }
}

/** loadI18n fetches the dictionaries and picks the stored or browser language. */
export async function loadI18n() {
  await Promise.all(LANGS.map(async l => {
    const res = await fetch(`/ui/i18n/${l}.json`, { credentials: "same-origin" });
    dicts[l] = await res.json();
  }));
  const preferred = stored("sj_lang", (navigator.language || "en").toLowerCase().startsWith("zh") ? "zh-CN" : "en");
  lang = LANGS.includes(preferred) ? preferred : "en";
  utc = stored("sj_utc", "0") === "1";
  document.documentElement.lang = lang;
}

export function getLang() { return lang; }
export function isUTC() { return utc; }

/** setLang switches the language, persists it and notifies listeners. */
export function setLang(l) {
  if (!LANGS.includes(l) || l === lang) return;
  lang = l;
  store("sj_lang", l);
  document.documentElement.lang = l;
  changeHandlers.forEach(fn => fn());
}

/** setUTC switches between UTC and browser-local display of instants. */
export function setUTC(on) {
  utc = !!on;
  store("sj_utc", utc ? "1" : "0");
  changeHandlers.forEach(fn => fn());
}

export function onLocaleChange(fn) { changeHandlers.add(fn); }

/** t returns the string for key with {name} placeholders filled from vars. */
export function t(key, vars) {
  let s = (dicts[lang] && dicts[lang][key]) ?? (dicts.en && dicts.en[key]) ?? key;
  if (vars) s = s.replace(/\{(\w+)\}/g, (m, k) => (k in vars ? String(vars[k]) : m));
  return s;
}

/**
 * srvText is a server message in the reader's language: the translation of
 * its code ("srv.<code>" in the dictionaries) with its arguments filled in
 * (an argument that is itself a message {code, args} is translated in turn),
 * or english, the text the server sent, when there is no code (a handler's
 * own error, rows from before codes) or the code is unknown to this console.
 */
export function srvText(code, args, english) {
  const key = "srv." + code;
  const s = code ? (dicts[lang] && dicts[lang][key]) ?? (dicts.en && dicts.en[key]) : undefined;
  if (s == null) return english || "";
  return s.replace(/\{(\w+)\}/g, (m, k) => {
    if (!args || !(k in args)) return m;
    const v = args[k];
    return v && typeof v === "object" ? srvText(v.code, v.args, "") : String(v);
  });
}

/** errText is a run's or slot attempt's error in the reader's language. */
export function errText(x) { return x ? srvText(x.error_code, x.error_args, x.error) : ""; }

/** warningTexts are an answer's warnings in the reader's language. */
export function warningTexts(x) {
  const codes = (x && x.warning_codes) || [];
  return ((x && x.warnings) || []).map((w, i) => codes[i] ? srvText(codes[i].code, codes[i].args, w) : w);
}

/** noteText is a previewed firing's daylight-saving note in the reader's language. */
/** firingZone shows the zone of a previewed firing of a job with several
 * zones, and the zones that fire at the same instant. */
export function firingZone(f) {
  const el = document.createElement("div");
  el.className = "pv-zone";
  el.textContent = f.zone + (f.also_zones && f.also_zones.length ? " · " + t("form.alsoZones", { zones: f.also_zones.join(", ") }) : "");
  return el;
}

export function noteText(f) {
  return f.note_codes ? f.note_codes.map(n => srvText(n.code, n.args, "")).join("; ") : (f.note || "");
}

/**
 * fieldTexts are an API error's field errors in the reader's language:
 * field → the translation of its code (field_codes), or the English the
 * server sent (fields) for a field without a code the console knows.
 */
export function fieldTexts(e) {
  const out = {};
  const codes = (e && e.fieldCodes) || {};
  for (const [k, english] of Object.entries((e && e.fields) || {})) {
    const c = codes[k];
    out[k] = c ? srvText(c.code, c.args, english) : english;
  }
  return out;
}

/** alarmText is an alarm's message in the reader's language. */
export function alarmText(a) { return srvText(a.message_code, a.message_args, a.message); }

/** tOr returns the translation of key, or fallback when the key is unknown. */
export function tOr(key, fallback) {
  return (dicts[lang] && dicts[lang][key]) ?? (dicts.en && dicts.en[key]) ?? fallback;
}

/** status returns the label of a run, attempt or executor status. */
export function status(s) { return tOr("status." + s, s); }

const dtfCache = new Map();
function dtf(opts) {
  const key = lang + (utc ? "|utc|" : "|local|") + JSON.stringify(opts);
  let f = dtfCache.get(key);
  if (!f) {
    f = new Intl.DateTimeFormat("en-GB", { ...opts, hourCycle: "h23", timeZone: utc ? "UTC" : undefined });
    dtfCache.set(key, f);
  }
  return f;
}

function parts(d, opts) {
  const o = {};
  for (const p of dtf(opts).formatToParts(d)) o[p.type] = p.value;
  return o;
}

function toDate(v) {
  if (v == null || v === "") return null;
  const d = v instanceof Date ? v : new Date(typeof v === "number" ? v : Date.parse(v));
  return isNaN(d) ? null : d;
}

/** fmtDateTime: "2026-11-30 12:18:45" in the display zone; "—" for null. */
export function fmtDateTime(v) {
  const d = toDate(v);
  if (!d) return "—";
  const p = parts(d, { year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit" });
  return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second}`;
}

/** fmtTime: "12:18:45" (with milliseconds when ms is set). */
export function fmtTime(v, ms) {
  const d = toDate(v);
  if (!d) return "—";
  const p = parts(d, { hour: "2-digit", minute: "2-digit", second: "2-digit" });
  const base = `${p.hour}:${p.minute}:${p.second}`;
  return ms ? base + "." + String(d.getUTCMilliseconds()).padStart(3, "0") : base;
}

/** fmtHM: "12:18" for chart axes. */
export function fmtHM(v) {
  const d = toDate(v);
  if (!d) return "";
  const p = parts(d, { hour: "2-digit", minute: "2-digit" });
  return `${p.hour}:${p.minute}`;
}

/** zoneLabel names the display zone. */
export function zoneLabel() {
  return utc ? "UTC" : (Intl.DateTimeFormat().resolvedOptions().timeZone || "local");
}

/** fmtInZone formats an instant as wall time in an IANA zone. */
export function fmtInZone(v, zone) {
  const d = toDate(v);
  if (!d) return "—";
  try {
    const f = new Intl.DateTimeFormat("en-GB", { timeZone: zone, hourCycle: "h23", year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit", weekday: "short" });
    const p = {};
    for (const x of f.formatToParts(d)) p[x.type] = x.value;
    return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second}`;
  } catch { return fmtDateTime(d); }
}

/** fmtWeekday returns the short weekday of an instant in zone, localised. */
export function fmtWeekday(v, zone) {
  const d = toDate(v);
  if (!d) return "";
  try { return new Intl.DateTimeFormat(lang, { weekday: "short", timeZone: zone }).format(d); } catch { return ""; }
}

const rtfCache = new Map();
/** fmtRel: "3 sec. ago", "in 5 min" (localised) relative to now. */
export function fmtRel(v, now = Date.now()) {
  const d = toDate(v);
  if (!d) return "—";
  let rtf = rtfCache.get(lang);
  if (!rtf) { rtf = new Intl.RelativeTimeFormat(lang, { numeric: "auto", style: "short" }); rtfCache.set(lang, rtf); }
  const diff = (d.getTime() - now) / 1000;
  const a = Math.abs(diff);
  if (a < 1) return t("time.now");
  if (a < 60) return rtf.format(Math.round(diff), "second");
  if (a < 3600) return rtf.format(Math.round(diff / 60), "minute");
  if (a < 86400) return rtf.format(Math.round(diff / 3600), "hour");
  return rtf.format(Math.round(diff / 86400), "day");
}

/** fmtDur formats milliseconds: 850 ms, 3.2 s, 4m 12s, 2h 03m, 3d 4h. */
export function fmtDur(ms) {
  if (ms == null || isNaN(ms)) return "—";
  const neg = ms < 0 ? "−" : "";
  ms = Math.abs(ms);
  if (ms < 10 && ms % 1) return neg + ms.toFixed(1) + " ms";
  if (ms < 1000) return neg + Math.round(ms) + " ms";
  const s = ms / 1000;
  if (s < 60) return neg + (s < 10 ? s.toFixed(1) : Math.round(s)) + " s";
  const m = Math.floor(s / 60);
  if (m < 60) return neg + `${m}m ${String(Math.floor(s % 60)).padStart(2, "0")}s`;
  const h = Math.floor(m / 60);
  if (h < 48) return neg + `${h}h ${String(m % 60).padStart(2, "0")}m`;
  return neg + `${Math.floor(h / 24)}d ${h % 24}h`;
}

/** fmtNum formats an integer with grouping. */
export function fmtNum(n) {
  if (n == null || isNaN(n)) return "—";
  return new Intl.NumberFormat(lang).format(n);
}

/** fmtPct formats a ratio 0..1 as a percentage. */
export function fmtPct(r, digits = 1) {
  if (r == null || isNaN(r)) return "—";
  return (r * 100).toFixed(digits).replace(/\.0+$/, "") + "%";
}
