// Failed and partially failed runs, latest scheduled first, with one-click retry of
// their failed slots.
import { api } from "../api.js";
import { t, fmtNum, errText } from "../i18n.js";
import { h, pageHead, syncTable, badge, absTime, relTime, emptyState, toast, icon, busy, fill } from "../dom.js";
import { slotBar } from "./jobdetail.js";
import { byScheduled } from "./runs.js";

export default function mount(root, ctx) {
  const tbody = h("tbody");
  const empty = h("div", { hidden: true }, emptyState(t("fail.none"), t("fail.noneSub")));
  const summary = h("div", { class: "stats stats-3", id: "fail-summary" });
  const table = h("table", { class: "table table-hover", id: "failures-table" },
    h("thead", {}, h("tr", {}, h("th", { class: "num" }, t("col.run")), h("th", {}, t("col.job")), h("th", {}, t("col.scheduled")),
      h("th", {}, t("col.status")), h("th", {}, t("col.slots")), h("th", {}, t("col.error")),
      ctx.can("operator") ? h("th", { class: "actions-col" }, t("col.actions")) : null)),
    tbody);
  root.append(pageHead(t("fail.title"), t("fail.sub")), summary,
    h("div", { class: "card" }, h("div", { class: "table-wrap" }, table), empty));
  tbody.addEventListener("click", ev => {
    const tr = ev.target.closest("tr");
    if (tr && tr.dataset.key && !ev.target.closest("a, button")) ctx.navigate("#/runs/" + tr.dataset.key);
  });

  async function retry(r, btn) {
    try {
      const res = await busy(btn, api("POST", `/runs/${r.id}/retry`));
      toast(t("run.retried", { n: res.retried_slots }));
      ctx.refreshNow();
    } catch (e) { toast(e.message, "error"); }
  }

  async function refresh() {
    const [f, p] = await Promise.all([api("GET", "/runs?status=failed&limit=200"), api("GET", "/runs?status=partially_failed&limit=200")]);
    if (!ctx.isCurrent()) return;
    const runs = [...f.runs, ...p.runs].sort(byScheduled);
    const day = Date.now() - 86400000;
    const jobsHit = new Set(runs.filter(r => Date.parse(r.scheduled_at) > day).map(r => r.job_id));
    fill(summary, 
      h("div", { class: "stat stat-bad" }, h("div", { class: "stat-label" }, t("fail.last24h")), h("div", { class: "stat-value" }, fmtNum(runs.filter(r => Date.parse(r.scheduled_at) > day).length))),
      h("div", { class: "stat" }, h("div", { class: "stat-label" }, t("fail.jobsAffected")), h("div", { class: "stat-value" }, fmtNum(jobsHit.size))),
      h("div", { class: "stat" }, h("div", { class: "stat-label" }, t("fail.slotsFailed")), h("div", { class: "stat-value" }, fmtNum(runs.reduce((a, r) => a + r.slots_failed, 0)))));
    const cols = [
      { class: "num mono", sig: r => r.id, cell: r => h("a", { href: "#/runs/" + r.id }, "#" + r.id) },
      { sig: r => r.job_name, cell: r => h("a", { href: "#/jobs/" + r.job_id, class: "cell-title" }, h("span", { class: "app-tag" }, r.app), h("span", { class: "job-name" }, r.job_name)) },
      { sig: r => r.scheduled_at, cell: r => [absTime(r.scheduled_at), h("div", { class: "sub-line" }, relTime(r.scheduled_at))] },
      { sig: r => r.status, cell: r => badge(r.status) },
      { sig: r => `${r.slots_succeeded}/${r.slots_failed}/${r.slots}`, cell: r => slotBar(r) },
      { class: "error-cell", sig: r => errText(r), cell: r => h("span", { title: errText(r) }, errText(r) || t("dash.slotsFailed", { n: r.slots_failed, total: r.slots })) },
    ];
    if (ctx.can("operator")) cols.push({ class: "actions-col", sig: r => r.status, cell: r => h("button", { type: "button", class: "btn btn-sm btn-primary", dataset: { act: "retry", run: r.id }, onclick: ev => retry(r, ev.currentTarget) }, icon("retry"), h("span", {}, t("fail.retry"))) });
    syncTable(tbody, runs, r => r.id, cols);
    table.hidden = !runs.length;
    empty.hidden = !!runs.length;
  }

  return { refresh, interval: () => 5000 };
}
