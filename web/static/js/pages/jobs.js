// Job list: search by name, filters by app, state and schedule kind, sort,
// all on the server (GET /jobs), a page at a time with "More" (keyset
// cursor); last run and next firing, and the operator actions per row.
// A substring search examines a bounded number of jobs per request and
// says how far it got ("searched N jobs so far").
import { api, qs } from "../api.js";
import { t, fmtDateTime, errText, srvText } from "../i18n.js";
import { h, pageHead, syncTable, badge, relTime, emptyState, pill, icon, fill, button, debounce } from "../dom.js";
import { actionButtons, jobState, STATE_PILL } from "./jobactions.js";

const saved = { q: "", match: "prefix", state: "all", app: "", schedule: "", sort: "name" };
const PAGE = 50;

export default function mount(root, ctx) {
  let jobs = [];
  let lastRun = new Map();
  // The list as loaded: the answer of the first page (count), the cursor
  // of the next page, how many jobs a bounded search examined so far.
  let first = null;
  let next = null;
  let partial = false;
  let scanned = 0;
  let pages = 0;
  let gen = 0;

  const search = h("input", { type: "search", id: "job-search", class: "search-input", placeholder: t("jobs.search"), value: saved.q, "aria-label": t("jobs.search") });
  const appSel = h("select", { id: "job-app", "aria-label": t("col.app") });
  const stateSeg = h("div", { class: "segmented", id: "job-state" }, ["all", "scheduled", "paused", "disabled", "completed"].map(s =>
    h("button", { type: "button", class: s === saved.state && "active", dataset: { state: s }, onclick: () => {
      saved.state = s;
      stateSeg.querySelectorAll("button").forEach(b => b.classList.toggle("active", b.dataset.state === s));
      restart();
    } }, t("jobs.filter." + s))));
  const matchSel = h("select", { id: "job-match", "aria-label": t("jobs.match") },
    h("option", { value: "prefix" }, t("jobs.match.prefix")), h("option", { value: "contains" }, t("jobs.match.contains")));
  matchSel.value = saved.match;
  const schedSel = h("select", { id: "job-schedule", "aria-label": t("col.schedule") },
    ["", "cron", "every", "at"].map(k => h("option", { value: k }, t("jobs.schedule." + (k || "all")))));
  schedSel.value = saved.schedule;
  const sortSel = h("select", { id: "job-sort", "aria-label": t("jobs.sort") },
    ["name", "next_fire", "id"].map(k => h("option", { value: k }, t("jobs.sort." + k))));
  sortSel.value = saved.sort;
  const count = h("span", { class: "muted", id: "job-count" });
  const more = button(t("jobs.more"), { id: "jobs-more", onclick: async ev => {
    const b = ev.currentTarget;
    b.disabled = true;
    try { await loadMore(); } finally { b.disabled = false; }
  } });
  const tbody = h("tbody");
  const empty = h("div", { hidden: true });
  const table = h("table", { class: "table table-hover", id: "jobs-table" },
    h("thead", {}, h("tr", {},
      h("th", { class: "num" }, t("col.id")), h("th", {}, t("col.job")), h("th", {}, t("col.handler")), h("th", {}, t("col.schedule")),
      h("th", { class: "num" }, t("col.slots")), h("th", {}, t("col.state")), h("th", {}, t("col.lastRun")), h("th", {}, t("col.nextFire")),
      ctx.can("operator") ? h("th", { class: "actions-col" }, t("col.actions")) : null)),
    tbody);

  const newBtn = ctx.can("operator") ? h("a", { href: "#/jobs/new", class: "btn btn-primary", id: "new-job" }, icon("plus"), h("span", {}, t("jobs.new"))) : null;
  root.append(
    pageHead(t("jobs.title"), t("jobs.sub"), newBtn),
    h("div", { class: "card" },
      h("div", { class: "toolbar" },
        h("div", { class: "search" }, icon("search"), search), matchSel, appSel, stateSeg, schedSel, sortSel, h("div", { class: "spacer" }), count),
      h("div", { class: "table-wrap" }, table), empty,
      h("div", { class: "table-foot" }, more)));

  // A change of the search or a filter starts the list again from its
  // first page on the server.
  const restart = () => { first = null; next = null; pages = 0; scanned = 0; partial = false; gen++; ctx.refreshNow(); };
  const typed = debounce(restart, 250);
  search.addEventListener("input", () => { saved.q = search.value; typed(); });
  matchSel.addEventListener("change", () => { saved.match = matchSel.value; restart(); });
  appSel.addEventListener("change", () => { saved.app = appSel.value; restart(); });
  schedSel.addEventListener("change", () => { saved.schedule = schedSel.value; restart(); });
  sortSel.addEventListener("change", () => { saved.sort = sortSel.value; restart(); });

  function params(cursor) {
    const q = saved.q.trim();
    return qs({ q, match: q && saved.match === "contains" ? "contains" : "", app: saved.app, state: saved.state === "all" ? "" : saved.state,
      schedule: saved.schedule, sort: saved.sort === "name" ? "" : saved.sort, limit: PAGE, cursor });
  }

  function countText() {
    const n = jobs.length;
    // A bounded search has no count: how many it found, and while it has
    // not reached the end, how many jobs it searched so far.
    if (first && first.count === undefined) return partial || next ? t("jobs.countScanned", { n, scanned: scanned.toLocaleString() }) : t("jobs.countAll", { total: n });
    if (!first || first.count === undefined) return t("jobs.countShown", { n });
    if (!first.count_exact) return t("jobs.countMore", { n, total: first.count.toLocaleString() });
    return n < first.count ? t("jobs.count", { n, total: first.count }) : t("jobs.countAll", { total: first.count });
  }

  async function loadApps() {
    const { apps } = await api("GET", "/apps");
    const names = apps.map(a => a.name).sort();
    const want = ["", ...names].join("|");
    if (appSel.dataset.apps !== want) {
      fill(appSel, h("option", { value: "" }, t("jobs.allApps")), ...names.map(a => h("option", { value: a }, a)));
      appSel.dataset.apps = want;
      appSel.value = saved.app;
    }
  }

  async function loadMore() {
    if (!next) return;
    const my = gen;
    const page = await api("GET", "/jobs" + params(next));
    if (my !== gen) return;
    jobs.push(...page.jobs.filter(j => !jobs.some(o => o.id === j.id)));
    next = page.next_cursor || null;
    partial = !!page.partial;
    scanned += page.scanned || 0;
    pages++;
    render();
  }

  // A job whose circuit breaker is open or probing says so under its
  // state (its runs and retries are held; docs/failures.md), the reason on
  // hover; the job's page has the details and the Close button.
  function breakerSig(j) {
    return j.breaker && j.breaker.state !== "closed" ? j.breaker.state + (j.breaker.reason || "") : "";
  }
  function breakerPill(j) {
    const b = j.breaker;
    if (!b || b.state === "closed") return null;
    const why = b.reason_code ? srvText(b.reason_code.code, b.reason_code.args, b.reason) : (b.reason || "");
    return h("div", { class: "sub-line" }, h("span", { class: ["pill", b.state === "open" ? "pill-bad" : "pill-warn", "job-breaker-pill"], "data-state": b.state,
      title: t("jobs.breakerTip", { at: b.opened_at ? fmtDateTime(b.opened_at) : "—", why }) }, t("jobs.breaker." + b.state)));
  }

  function render() {
    const shown = jobs;
    count.textContent = countText();
    more.hidden = !next;
    fill(more, h("span", {}, partial ? t("jobs.searchMore", { scanned: scanned.toLocaleString() }) : t("jobs.more")));
    const cols = [
      { class: "num mono", sig: j => j.id, cell: j => String(j.id) },
      { sig: j => j.app + j.name + j.description, cell: j => h("a", { href: "#/jobs/" + j.id, class: "cell-title", title: j.description || "" },
        h("span", { class: "app-tag" }, j.app), h("span", { class: "job-name" }, j.name)) },
      { class: "mono", sig: j => j.handler, cell: j => j.handler },
      { sig: j => j.cron + (j.time_zones || [j.time_zone]).join(), cell: j => h("div", { class: "sched" }, h("code", {}, j.cron), h("span", { class: "zone" }, (j.time_zones || [j.time_zone]).join(" · "))) },
      { class: "num", sig: j => j.slots, cell: j => String(j.slots) },
      { sig: j => jobState(j) + breakerSig(j), cell: j => [pill(t("jobs.state." + jobState(j)), STATE_PILL[jobState(j)]), breakerPill(j)] },
      { sig: j => { const r = lastRun.get(j.id); return r ? r.id + r.status + errText(r) : ""; }, cell: j => {
        const r = lastRun.get(j.id);
        if (!r) return h("span", { class: "muted" }, "—");
        // A pending run says why it waits; a failed one why it failed.
        const why = errText(r);
        return [h("a", { href: "#/runs/" + r.id, class: "last-run", title: why }, badge(r.status, "badge-sm"), relTime(r.scheduled_at)),
          why ? h("div", { class: ["sub-line", "run-reason", r.status === "pending" ? "text-warn" : "text-bad"], title: why }, why.length > 80 ? why.slice(0, 80) + "…" : why) : null];
      } },
      { sig: j => (jobState(j) === "scheduled" ? j.next_fire_at : "") || "", cell: j => jobState(j) === "scheduled" && j.next_fire_at
        ? h("div", { class: "next-fire" }, relTime(j.next_fire_at), h("div", { class: "sub-line" }, fmtDateTime(j.next_fire_at))) : h("span", { class: "muted" }, "—") },
    ];
    if (ctx.can("operator")) cols.push({ class: "actions-col", sig: j => jobState(j) + j.version, cell: j => h("div", { class: "row-actions" }, actionButtons(j, ctx, () => ctx.refreshNow())) });
    syncTable(tbody, shown, j => j.id, cols);
    table.hidden = !shown.length;
    empty.hidden = !!shown.length;
    const filtered = saved.q.trim() || saved.app || saved.state !== "all" || saved.schedule;
    fill(empty, filtered ? emptyState(partial ? t("jobs.noMatchYet", { scanned: scanned.toLocaleString() }) : t("jobs.noMatch"), t("jobs.noMatchSub"))
      : emptyState(t("jobs.none"), ctx.can("operator") ? t("jobs.noneSub") : ""));
  }

  // refresh reads the first page again (the whole list while only it is
  // loaded; the rows it holds otherwise) and the recent runs.
  async function refresh() {
    const my = gen;
    const [page, recent] = await Promise.all([api("GET", "/jobs" + params("")), api("GET", "/runs?limit=500&count=0"), loadApps()]);
    if (my !== gen) return;
    if (pages <= 1) {
      first = page;
      jobs = page.jobs;
      next = page.next_cursor || null;
      partial = !!page.partial;
      scanned = page.scanned || 0;
      pages = 1;
    } else {
      const byId = new Map(page.jobs.map(j => [j.id, j]));
      jobs = jobs.map(j => byId.get(j.id) || j);
    }
    lastRun = new Map();
    // The leader creates runs ahead of their time (pre-read window): the
    // last run is the newest one that is due.
    const now = Date.now();
    for (const r of recent.runs) if (!lastRun.has(r.job_id) && Date.parse(r.scheduled_at) <= now) lastRun.set(r.job_id, r);
    if (ctx.isCurrent()) render();
  }

  tbody.addEventListener("click", ev => {
    if (ev.target.closest("a, button, details")) return;
    const tr = ev.target.closest("tr");
    if (tr && tr.dataset.key && !window.getSelection().toString()) ctx.navigate("#/jobs/" + tr.dataset.key);
  });

  return { refresh, interval: () => 5000 };
}
