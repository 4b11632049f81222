// Audit log (operators and admins): who changed what, newest first, paged
// with the keyset cursor of GET /audit; the server filters by user, action
// and object prefix and time range, a text filter narrows what is loaded;
// the API token an actor used is named under the actor; the detail JSON
// pretty-printed in a collapsible block.
// Admins read every entry; others the entries of their apps and of their
// own account (the server filters), which a note says.
import { api, qs } from "../api.js";
import { t, isUTC } from "../i18n.js";
import { h, pageHead, syncTable, absTime, relTime, emptyState, button, icon } from "../dom.js";

const PAGE = 100;
let filter = "";
// The server-side filter (GET /audit's actor, action, object, from, to);
// kept while the console is open.
const server = { actor: "", action: "", object: "", from: "", to: "" };

/** instant turns a datetime-local value into RFC 3339, in UTC when the
 * console shows UTC, else in the browser's zone. */
function instant(v) {
  if (!v) return "";
  const d = new Date(isUTC() ? v + "Z" : v);
  return isNaN(d) ? "" : d.toISOString();
}

/** pretty returns detail as indented JSON, or null when there is nothing to show. */
function pretty(detail) {
  if (!detail || detail === "null" || detail === "{}") return null;
  try { return JSON.stringify(JSON.parse(detail), null, 2); } catch { return detail; }
}

/** summary is a one-line hint of a detail object: its top-level keys. */
function summary(detail) {
  try {
    const v = JSON.parse(detail);
    if (v && typeof v === "object" && !Array.isArray(v)) return Object.keys(v).join(", ");
  } catch { /* not JSON: no hint */ }
  return "";
}

function actionKind(action) {
  if (/\.(delete|revoke|kill|cancel)$/.test(action)) return "bad";
  if (/\.(create|trigger|retry)$/.test(action)) return "ok";
  if (action === "login") return "muted";
  if (action === "login.failed") return "warn";
  return "info";
}

// Names of jobs and executors by id, to show objects by name (the id on
// hover): filled from /jobs and /executors with the first page.
const names = { job: new Map(), executor: new Map() };

/** objectCell names job/N and executor/N (their id on hover) and links
 * jobs and runs to their pages; other objects stay as written. */
function objectCell(obj) {
  const m = /^(job|run|executor)\/(\d+)$/.exec(obj);
  if (!m) return h("span", { class: "mono" }, obj);
  const name = names[m[1]] && names[m[1]].get(Number(m[2]));
  const label = name || (m[1] === "run" ? t("common.runN", { id: m[2] }) : obj);
  if (m[1] === "executor") return h("span", { class: "mono", title: obj }, label);
  return h("a", { href: `#/${m[1]}s/${m[2]}`, class: "link mono", title: obj }, label);
}

async function loadNames() {
  const [jobs, execs] = await Promise.all([api("GET", "/jobs?limit=500").catch(() => ({ jobs: [] })), api("GET", "/executors").catch(() => ({ executors: [] }))]);
  for (const j of jobs.jobs || []) names.job.set(j.id, j.app + "/" + j.name);
  for (const e of execs.executors || []) names.executor.set(e.id, e.instance_id);
}

export default function mount(root, ctx) {
  if (!ctx.can("operator")) {
    root.append(pageHead(t("audit.title")), h("div", { class: "callout callout-warn", id: "audit-forbidden" }, t("audit.forbidden")));
    return { refresh: async () => {}, interval: () => 0 };
  }
  const entries = new Map();
  let before = null; // cursor of the next older page; null: no older page
  let started = false;
  const tbody = h("tbody");
  const empty = h("div", { hidden: true });
  const count = h("span", { class: "muted", id: "audit-count" });
  const search = h("input", { type: "search", id: "audit-filter", class: "search-input", placeholder: t("audit.filter"), "aria-label": t("audit.filter"), value: filter });
  search.addEventListener("input", () => { filter = search.value; render(); });
  const moreBtn = button(t("audit.loadMore"), { id: "audit-more", onclick: ev => loadOlder(ev.currentTarget) });
  const serverInput = (key, attrs) => {
    const el = h("input", { id: "audit-" + key, class: "filter-input", "aria-label": t("audit.f." + key), title: t("audit.f." + key), ...attrs });
    el.value = server[key];
    el.addEventListener("change", () => { server[key] = el.value.trim(); reload(); });
    return el;
  };
  const serverFilters = h("div", { class: "filters", id: "audit-server-filters" },
    serverInput("actor", { placeholder: t("audit.f.actor"), autocomplete: "off", spellcheck: "false" }),
    serverInput("action", { placeholder: t("audit.f.action"), list: "audit-actions", autocomplete: "off", spellcheck: "false" }),
    h("datalist", { id: "audit-actions" }, ["job.", "run.", "executor.", "user.", "token.", "login", "login.failed"].map(a => h("option", { value: a }))),
    serverInput("object", { placeholder: t("audit.f.object"), autocomplete: "off", spellcheck: "false" }),
    serverInput("from", { type: "datetime-local", step: 1 }),
    serverInput("to", { type: "datetime-local", step: 1 }));
  const table = h("table", { class: "table", id: "audit-table" },
    h("thead", {}, h("tr", {}, h("th", {}, t("col.time")), h("th", {}, t("col.actor")), h("th", {}, t("col.action")),
      h("th", {}, t("col.object")), h("th", {}, t("col.app")), h("th", {}, t("col.detail")))),
    tbody);
  root.append(pageHead(t("audit.title"), t("audit.sub")));
  // Admins read every entry; others are told what they see.
  if (!ctx.can("admin")) root.append(h("div", { class: "callout callout-info", id: "audit-scope" }, t("audit.scoped")));
  root.append(
    h("div", { class: "card" },
      h("div", { class: "toolbar" }, serverFilters, h("div", { class: "search" }, icon("search"), search), h("div", { class: "spacer" }), count),
      h("div", { class: "table-wrap" }, table), empty, h("div", { class: "table-foot" }, moreBtn)));

  function matches(e) {
    const q = filter.trim().toLowerCase();
    if (!q) return true;
    return q.split(/\s+/).every(w => [e.actor, e.action, e.object, e.app].some(f => (f || "").toLowerCase().includes(w)));
  }

  function render() {
    const list = [...entries.values()].filter(matches).sort((a, b) => b.id - a.id);
    syncTable(tbody, list, e => e.id, [
      { sig: e => e.at, cell: e => [absTime(e.at), h("div", { class: "sub-line" }, relTime(e.at))] },
      { sig: e => e.actor + "|" + (e.token_name || ""), cell: e => [h("span", { class: "audit-actor" }, e.actor),
        e.token_id ? h("div", { class: "sub-line audit-token", title: t("audit.tokenId", { id: e.token_id }) }, t("audit.viaToken", { name: e.token_name || "#" + e.token_id })) : null] },
      { sig: e => e.action, cell: e => h("span", { class: ["pill", "pill-" + actionKind(e.action), "mono"], dataset: { action: e.action } }, e.action) },
      { sig: e => e.object + "|" + (names.job.size + names.executor.size), cell: e => objectCell(e.object) },
      { class: "audit-app", sig: e => e.app || "", cell: e => e.app || h("span", { class: "muted" }, "—") },
      { class: "audit-detail-cell", sig: e => e.detail, cell: e => {
        const p = pretty(e.detail);
        if (p === null) return h("span", { class: "muted" }, "—");
        return h("details", { class: "audit-detail" },
          h("summary", {}, t("audit.detail"), summary(e.detail) ? h("span", { class: "muted" }, " · ", summary(e.detail)) : null),
          h("pre", { class: "json-pre" }, p));
      } },
    ]);
    table.hidden = !list.length;
    empty.hidden = !!list.length;
    empty.replaceChildren(entries.size ? emptyState(t("audit.noMatch")) : emptyState(t("audit.none"), t("audit.noneSub")));
    moreBtn.hidden = !before;
    count.textContent = t("audit.count", { n: list.length, total: entries.size });
  }

  function query(extra) {
    return qs({ ...extra, actor: server.actor, action: server.action, object: server.object, from: instant(server.from), to: instant(server.to) });
  }

  /** reload starts over with the server filter changed. */
  function reload() {
    entries.clear();
    before = null;
    started = false;
    ctx.refreshNow();
  }

  async function loadOlder(btn) {
    if (!before) return;
    btn.disabled = true;
    try {
      const res = await api("GET", "/audit" + query({ before, limit: PAGE }));
      res.entries.forEach(e => entries.set(e.id, e));
      before = res.next_before || null;
      render();
    } finally { btn.disabled = false; }
  }

  async function refresh() {
    // The newest page; older pages stay as loaded.
    const q = query({ limit: PAGE });
    const [res] = await Promise.all([api("GET", "/audit" + q), started ? null : loadNames()]);
    if (!ctx.isCurrent() || q !== query({ limit: PAGE })) return; // the filter changed meanwhile
    res.entries.forEach(e => entries.set(e.id, e));
    if (!started) { started = true; before = res.next_before || null; }
    render();
  }

  return { refresh, interval: () => 10000 };
}
