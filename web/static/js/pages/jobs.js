// Job list: search, filters by app and state, last run and next firing,
// and the operator actions per row.
import { api, allJobs } from "../api.js";
import { t, fmtDateTime, errText } from "../i18n.js";
import { h, pageHead, syncTable, badge, relTime, emptyState, pill, icon, fill } from "../dom.js";
import { actionButtons, jobState, STATE_PILL } from "./jobactions.js";

const saved = { q: "", state: "all", app: "" };

export default function mount(root, ctx) {
  let jobs = [];
  let lastRun = new Map();

  const search = h("input", { type: "search", id: "job-search", class: "search-input", placeholder: t("jobs.search"), value: saved.q, "aria-label": t("jobs.search") });
  const appSel = h("select", { id: "job-app", "aria-label": t("col.app") });
  const stateSeg = h("div", { class: "segmented", id: "job-state" }, ["all", "scheduled", "paused", "disabled", "completed"].map(s =>
    h("button", { type: "button", class: s === saved.state && "active", dataset: { state: s }, onclick: () => {
      saved.state = s;
      stateSeg.querySelectorAll("button").forEach(b => b.classList.toggle("active", b.dataset.state === s));
      render();
    } }, t("jobs.filter." + s))));
  const count = h("span", { class: "muted", id: "job-count" });
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
        h("div", { class: "search" }, icon("search"), search), appSel, stateSeg, h("div", { class: "spacer" }), count),
      h("div", { class: "table-wrap" }, table), empty));

  search.addEventListener("input", () => { saved.q = search.value; render(); });
  appSel.addEventListener("change", () => { saved.app = appSel.value; render(); });

  function matches(j) {
    if (saved.state !== "all" && jobState(j) !== saved.state) return false;
    if (saved.app && j.app !== saved.app) return false;
    const q = saved.q.trim().toLowerCase();
    if (!q) return true;
    return q.split(/\s+/).every(w => [j.app, j.name, j.handler, j.cron, j.time_zone, j.description, String(j.id)].some(f => (f || "").toLowerCase().includes(w)));
  }

  function render() {
    const apps = [...new Set(jobs.map(j => j.app))].sort();
    const want = ["", ...apps].join("|");
    if (appSel.dataset.apps !== want) {
      fill(appSel, h("option", { value: "" }, t("jobs.allApps")), ...apps.map(a => h("option", { value: a }, a)));
      appSel.dataset.apps = want;
      appSel.value = saved.app;
    }
    const shown = jobs.filter(matches);
    count.textContent = t("jobs.count", { n: shown.length, total: jobs.length });
    const cols = [
      { class: "num mono", sig: j => j.id, cell: j => String(j.id) },
      { sig: j => j.app + j.name + j.description, cell: j => h("a", { href: "#/jobs/" + j.id, class: "cell-title", title: j.description || "" },
        h("span", { class: "app-tag" }, j.app), h("span", { class: "job-name" }, j.name)) },
      { class: "mono", sig: j => j.handler, cell: j => j.handler },
      { sig: j => j.cron + (j.time_zones || [j.time_zone]).join(), cell: j => h("div", { class: "sched" }, h("code", {}, j.cron), h("span", { class: "zone" }, (j.time_zones || [j.time_zone]).join(" · "))) },
      { class: "num", sig: j => j.slots, cell: j => String(j.slots) },
      { sig: j => jobState(j), cell: j => pill(t("jobs.state." + jobState(j)), STATE_PILL[jobState(j)]) },
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
    fill(empty, jobs.length ? emptyState(t("jobs.noMatch"), t("jobs.noMatchSub")) : emptyState(t("jobs.none"), ctx.can("operator") ? t("jobs.noneSub") : ""));
  }

  async function refresh() {
    const [js, recent] = await Promise.all([allJobs(), api("GET", "/runs?limit=500")]);
    jobs = js;
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
