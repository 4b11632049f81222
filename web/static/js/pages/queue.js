// Queue (docs/tenancy.md, "The queue"): what waits to start in the apps the
// user may see — due runs that have not started, by priority and reason,
// slots of started runs that wait for an executor, and each capped app's
// cap with its slots running now. GET /api/v1/queue reads the oldest
// 100,000 of each at most and says so when more wait.
import { api } from "../api.js";
import { t, fmtNum } from "../i18n.js";
import { h, pageHead, syncTable, emptyState, relTime } from "../dom.js";

const PRIORITIES = ["critical", "high", "normal", "low"];

/** capText says an app's cap and its slots running now. */
function capText(a) {
  if (a.max_running_slots == null) return h("span", { class: "muted" }, t("queue.noCap"));
  const full = a.running_slots >= a.max_running_slots;
  return h("span", { class: ["mono", "queue-cap", full && "queue-cap-full"] }, `${fmtNum(a.running_slots)} / ${fmtNum(a.max_running_slots)}`);
}

/** prioText lists the waiting runs and slots by priority, most urgent first. */
function prioText(a) {
  if (!a.priorities.length) return h("span", { class: "muted" }, "—");
  const byName = Object.fromEntries(a.priorities.map(p => [p.priority, p]));
  return h("div", { class: "chips chips-static" }, PRIORITIES.filter(p => byName[p]).map(p =>
    h("span", { class: ["app-tag", "prio-" + p], dataset: { priority: p } },
      t("queue.prio", { priority: t("priority." + p), runs: fmtNum(byName[p].runs), slots: fmtNum(byName[p].slots) }))));
}

/** reasonList says why the waiting runs wait, the most runs first. */
function reasonList(a) {
  if (!a.reasons.length) return h("span", { class: "muted" }, "—");
  return h("ul", { class: "queue-reasons" }, a.reasons.map(r =>
    h("li", {}, h("span", { class: "mono" }, fmtNum(r.runs) + " × "), r.reason || h("span", { class: "muted" }, t("queue.due")))));
}

export default function mount(root, ctx) {
  let q = null;
  const tbody = h("tbody");
  const empty = h("div", { hidden: true }, emptyState(t("queue.none"), t("queue.noneSub")));
  const partial = h("div", { class: "callout callout-warn queue-note", id: "queue-partial", hidden: true });
  const count = h("span", { class: "muted", id: "queue-count" });
  const table = h("table", { class: "table", id: "queue-table" },
    h("thead", {}, h("tr", {}, h("th", {}, t("col.app")), h("th", {}, t("queue.cap")), h("th", { class: "num" }, t("queue.runs")),
      h("th", { class: "num" }, t("queue.slots")), h("th", {}, t("queue.byPriority")), h("th", {}, t("queue.oldest")), h("th", {}, t("queue.why")))),
    tbody);
  root.append(pageHead(t("queue.title"), t("queue.sub")),
    h("div", { class: "card" }, h("div", { class: "toolbar" }, h("div", { class: "spacer" }), count), partial,
      h("div", { class: "table-wrap" }, table), empty));

  function render() {
    const apps = q.apps;
    syncTable(tbody, apps, a => a.app, [
      { sig: a => a.app, cell: a => h("span", { class: "app-tag", dataset: { app: a.app } }, a.app) },
      { sig: a => `${a.running_slots}/${a.max_running_slots}`, cell: capText },
      { class: "num mono", sig: a => a.waiting_runs, cell: a => fmtNum(a.waiting_runs) },
      { class: "num mono", sig: a => a.waiting_slots, cell: a => fmtNum(a.waiting_slots) },
      { sig: a => JSON.stringify(a.priorities), cell: prioText },
      { sig: a => a.oldest_since || "", cell: a => relTime(a.oldest_since) },
      { sig: a => JSON.stringify(a.reasons), cell: reasonList },
    ]);
    table.hidden = !apps.length;
    empty.hidden = !!apps.length;
    partial.hidden = !q.partial;
    partial.textContent = q.partial ? t("queue.partial", { n: fmtNum(q.limit) }) : "";
    const runs = apps.reduce((n, a) => n + a.waiting_runs, 0), slots = apps.reduce((n, a) => n + a.waiting_slots, 0);
    count.textContent = t("queue.count", { runs: fmtNum(runs), slots: fmtNum(slots) });
  }

  async function refresh() {
    const res = await api("GET", "/queue");
    if (!ctx.isCurrent()) return;
    q = res;
    render();
  }

  return { refresh, interval: () => 5000 };
}
