// Run list: filter by job, app, status, trigger kind and scheduled-time
// range (on the server, GET /runs), search what is loaded, newest first,
// keyset paging with "Load older" (cursor); the count of what matches
// (up to 10,000) from the server; the newest page refreshes live.
import { api, qs } from "../api.js";
import { t, tOr, fmtDur, fmtInZone, isUTC, zoneLabel, errText } from "../i18n.js";
import { h, pageHead, syncTable, badge, absTime, emptyState, button, relTime, fill, icon, pill, debounce } from "../dom.js";
import { slotBar, startAfterLine } from "./jobdetail.js";
import { startLag } from "../lag.js";

const STATUSES = ["", "pending", "running", "succeeded", "failed", "partially_failed", "cancelled", "skipped"];
const TRIGGERS = ["", "cron", "manual", "retry", "catch_up", "child", "api", "backfill", "workflow"];
const PAGE = 100;

/** byScheduled orders runs as the API lists them: latest scheduled first, ties by id. */
export function byScheduled(a, b) {
  return Date.parse(b.scheduled_at) - Date.parse(a.scheduled_at) || b.id - a.id;
}

function runDuration(r) {
  if (!r.started_at) return null;
  return (r.finished_at ? Date.parse(r.finished_at) : Date.now()) - Date.parse(r.started_at);
}

/**
 * jobPicker is a job filter: a select of the chosen job (filter.job_id)
 * and the jobs whose name starts with what is typed in the search box next
 * to it (a server search, 50 at most); options(jobs) fills the select,
 * keeping the chosen job. The ids are prefix-job and prefix-job-find.
 */
export function jobPicker(prefix, filter) {
  const sel = h("select", { id: prefix + "-job", "aria-label": t("col.job") }, h("option", { value: "" }, t("runs.allJobs")));
  const find = h("input", { type: "search", id: prefix + "-job-find", class: "filter-input", placeholder: t("runs.findJob"), "aria-label": t("runs.findJob") });
  const options = jobs => {
    const keep = filter.job_id;
    fill(sel, h("option", { value: "" }, t("runs.allJobs")), ...jobs.map(j => h("option", { value: String(j.id) }, `${j.app}/${j.name}`)));
    if (keep && !jobs.some(j => String(j.id) === keep)) sel.append(h("option", { value: keep }, "#" + keep));
    sel.value = keep;
  };
  find.addEventListener("input", debounce(async () => {
    const page = await api("GET", "/jobs" + qs({ q: find.value.trim(), limit: 50 }));
    options(page.jobs);
  }, 250));
  return { sel, find, options };
}

export default function mount(root, ctx) {
  const filter = { job_id: ctx.query.get("job_id") || "", app: ctx.query.get("app") || "", status: ctx.query.get("status") || "",
    trigger: ctx.query.get("trigger") || "", from: ctx.query.get("from") || "", to: ctx.query.get("to") || "" };
  let search = "";
  const runs = new Map();
  let nextBefore = null;
  let total = null;
  let appsLoaded = false;

  const { sel: jobSel, find: jobFind, options: jobOptions } = jobPicker("runs", filter);
  const appSel = h("select", { id: "runs-app", "aria-label": t("col.app") }, h("option", { value: "" }, t("jobs.allApps")));
  const trigSel = h("select", { id: "runs-trigger", "aria-label": t("col.trigger") }, TRIGGERS.map(k => h("option", { value: k }, k ? tOr("trigger." + k, k) : t("runs.allTriggers"))));
  trigSel.value = filter.trigger;
  const stSel = h("select", { id: "runs-status", "aria-label": t("col.status") }, STATUSES.map(s => h("option", { value: s }, s ? t("status." + s) : t("runs.allStatuses"))));
  stSel.value = filter.status;
  // Scheduled-time range (the server filters; RFC 3339 in the URL), and a
  // search over what is loaded (job, app, error, run id).
  const toLocal = iso => { if (!iso) return ""; const d = new Date(iso); if (isNaN(d)) return "";
    const z = isUTC() ? d.toISOString() : new Date(d.getTime() - d.getTimezoneOffset() * 60000).toISOString(); return z.slice(0, 19); };
  const toISO = v => { if (!v) return ""; const d = new Date(isUTC() ? v + "Z" : v); return isNaN(d) ? "" : d.toISOString(); };
  const range = key => {
    const el = h("input", { type: "datetime-local", step: 1, id: "runs-" + key, class: "filter-input", "aria-label": t("runs." + key), title: t("runs." + key) });
    el.value = toLocal(filter[key]);
    el.addEventListener("change", () => { filter[key] = toISO(el.value); apply(); });
    return el;
  };
  const searchBox = h("input", { type: "search", id: "runs-search", class: "search-input", placeholder: t("runs.search"), "aria-label": t("runs.search") });
  searchBox.addEventListener("input", () => { search = searchBox.value.trim().toLowerCase(); render(); });
  const more = button(t("runs.loadOlder"), { id: "runs-more", onclick: async ev => {
    const b = ev.currentTarget;
    b.disabled = true;
    try { await loadOlder(); } finally { b.disabled = false; }
  } });
  const tbody = h("tbody");
  const empty = h("div", { hidden: true }, emptyState(t("runs.none")));
  const table = h("table", { class: "table table-hover", id: "runs-table" },
    h("thead", {}, h("tr", {}, h("th", { class: "num" }, t("col.run")), h("th", {}, t("col.job")), h("th", { id: "runs-scheduled-head" }, t("col.scheduledIn", { zone: zoneLabel() })),
      h("th", {}, t("col.trigger")), h("th", {}, t("col.status")), h("th", {}, t("col.slots")),
      h("th", { class: "num" }, t("col.lag")), h("th", { class: "num" }, t("col.duration")), h("th", {}, t("col.error")))),
    tbody);

  root.append(pageHead(t("runs.title"), t("runs.sub")),
    h("div", { class: "card" },
      h("div", { class: "toolbar" }, jobFind, jobSel, appSel, stSel, trigSel, range("from"), range("to"), h("div", { class: "search" }, icon("search"), searchBox),
        h("div", { class: "spacer" }), h("span", { class: "muted", id: "runs-count" })),
      h("div", { class: "table-wrap" }, table), empty,
      h("div", { class: "table-foot" }, more)));

  const apply = () => {
    const q = qs(filter);
    history.replaceState(null, "", "#/runs" + q);
    runs.clear();
    nextBefore = null;
    total = null;
    fill(tbody);
    ctx.refreshNow();
  };
  jobSel.addEventListener("change", () => { filter.job_id = jobSel.value; apply(); });
  stSel.addEventListener("change", () => { filter.status = stSel.value; apply(); });
  appSel.addEventListener("change", () => { filter.app = appSel.value; apply(); });
  trigSel.addEventListener("change", () => { filter.trigger = trigSel.value; apply(); });
  tbody.addEventListener("click", ev => {
    const tr = ev.target.closest("tr");
    if (tr && tr.dataset.key && !ev.target.closest("a")) ctx.navigate("#/runs/" + tr.dataset.key);
  });

  function render() {
    const list = [...runs.values()].sort(byScheduled)
      .filter(r => !search || search.split(/\s+/).every(w => [String(r.id), r.app, r.job_name, errText(r), r.error || "", r.status].some(f => (f || "").toLowerCase().includes(w))));
    syncTable(tbody, list, r => r.id, [
      { class: "num mono", sig: r => r.id, cell: r => h("a", { href: "#/runs/" + r.id }, "#" + r.id) },
      { sig: r => r.job_id + r.job_name + !!r.job_deleted, cell: r => r.job_deleted
        ? h("span", { class: "cell-title job-deleted", title: t("run.jobDeletedTip", { name: `${r.app}/${r.job_name}` }) }, h("span", { class: "app-tag" }, r.app), h("span", { class: "job-name" }, r.job_name), " ", pill(t("runs.jobDeleted"), "muted"))
        : h("a", { href: "#/jobs/" + r.job_id, class: "cell-title" }, h("span", { class: "app-tag" }, r.app), h("span", { class: "job-name" }, r.job_name)) },
      // The instant in the display zone (named in the header), and the
      // firing's own wall time with its zone's name next to it.
      { sig: r => r.scheduled_at + r.time_zone + r.status + r.start_after, cell: r => [absTime(r.scheduled_at), h("div", { class: "sub-line" }, relTime(r.scheduled_at),
        r.time_zone ? h("span", { class: "run-zone", title: t("run.zone") }, " · ", fmtInZone(r.scheduled_at, r.time_zone), " ", r.time_zone) : null), startAfterLine(r)] },
      { sig: r => r.trigger, cell: r => tOr("trigger." + r.trigger, r.trigger) },
      { sig: r => r.status, cell: r => badge(r.status) },
      { sig: r => `${r.slots_succeeded}/${r.slots_failed}/${r.slots}`, cell: r => slotBar(r) },
      { class: "num", sig: r => r.first_slot_started_at, cell: r => fmtDur(startLag(r)) },
      { class: "num", sig: r => r.status + r.started_at + r.finished_at + (r.status === "running" ? Date.now() : ""), cell: r => fmtDur(runDuration(r)) },
      { class: "error-cell", sig: r => errText(r), cell: r => r.error ? h("span", { title: errText(r) }, errText(r)) : "" },
    ]);
    table.hidden = !list.length;
    empty.hidden = !!list.length;
    more.hidden = !nextBefore;
    document.getElementById("runs-count").textContent = total === null ? t("runs.count", { n: list.length })
      : total.count_exact ? t("runs.countOf", { n: list.length, total: total.count.toLocaleString() })
        : t("runs.countMore", { n: list.length, total: total.count.toLocaleString() });
  }

  async function loadOlder() {
    if (!nextBefore) return;
    const page = await api("GET", "/runs" + qs({ ...filter, cursor: nextBefore, limit: PAGE }));
    page.runs.forEach(r => runs.set(r.id, r));
    nextBefore = page.next_cursor || null;
    render();
  }

  async function refresh() {
    if (!appsLoaded) {
      const [{ apps }, first] = await Promise.all([api("GET", "/apps"), api("GET", "/jobs" + qs({ limit: 50 }))]);
      appSel.append(...apps.map(a => h("option", { value: a.name }, a.name)));
      appSel.value = filter.app;
      jobOptions(first.jobs);
      appsLoaded = true;
    }
    const page = await api("GET", "/runs" + qs({ ...filter, limit: PAGE }));
    if (!ctx.isCurrent()) return;
    page.runs.forEach(r => runs.set(r.id, r));
    if (page.count !== undefined) total = { count: page.count, count_exact: page.count_exact };
    if (nextBefore === null) nextBefore = page.next_cursor || null;
    // Runs still active below the first page are refreshed one by one.
    const firstIds = new Set(page.runs.map(r => r.id));
    const stale = [...runs.values()].filter(r => !firstIds.has(r.id) && (r.status === "pending" || r.status === "running")).slice(0, 20);
    await Promise.all(stale.map(async r => { try { const d = await api("GET", "/runs/" + r.id); runs.set(r.id, d.run); } catch { /* next time */ } }));
    render();
  }

  return { refresh, interval: () => 3000 };
}
