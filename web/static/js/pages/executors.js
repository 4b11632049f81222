// Executors: per-app summary and every registered instance with its
// capacity, handlers, state and last heartbeat.
import { api } from "../api.js";
import { t, fmtNum, fmtRel } from "../i18n.js";
import { h, pageHead, syncTable, badge, relTime, absTime, emptyState, pill, fill, toast, confirmDialog } from "../dom.js";

let showGone = false;

export default function mount(root, ctx) {
  const apps = h("div", { class: "app-cards", id: "exec-apps" });
  const tbody = h("tbody");
  const empty = h("div", { hidden: true }, emptyState(t("exec.none"), t("exec.noneSub")));
  const goneToggle = h("input", { type: "checkbox", id: "exec-gone" });
  goneToggle.checked = showGone;
  goneToggle.addEventListener("change", () => { showGone = goneToggle.checked; ctx.refreshNow(); });
  const table = h("table", { class: "table", id: "executors-table" },
    h("thead", {}, h("tr", {}, h("th", { class: "num" }, t("col.id")), h("th", {}, t("col.app")), h("th", {}, t("col.instance")),
      h("th", {}, t("col.address")), h("th", { class: "num" }, t("col.capacity")), h("th", {}, t("col.handlers")),
      h("th", {}, t("col.state")), h("th", {}, t("col.heartbeat")), h("th", {}, t("col.registered")), h("th", {}, ""))),
    tbody);
  root.append(pageHead(t("exec.title"), t("exec.sub")), apps,
    h("div", { class: "card" },
      h("div", { class: "toolbar" }, h("label", { class: "check" }, goneToggle, h("span", {}, t("exec.showGone"))), h("div", { class: "spacer" }), h("span", { class: "muted", id: "exec-count" })),
      h("div", { class: "table-wrap" }, table), empty));

  async function refresh() {
    // Gone executors (deregistered, or lost past the admin's
    // --forget-lost-after) are only sent when asked for.
    const { executors } = await api("GET", showGone ? "/executors?all=1" : "/executors");
    if (!ctx.isCurrent()) return;
    const byApp = new Map();
    for (const e of executors) {
      if (e.state === "gone") continue;
      const a = byApp.get(e.app) || { online: 0, total: 0, cap: 0, handlers: new Set() };
      a.total++;
      if (e.state === "online") { a.online++; a.cap += e.capacity; }
      (e.handlers || "").split(",").filter(Boolean).forEach(x => a.handlers.add(x));
      byApp.set(e.app, a);
    }
    fill(apps, ...[...byApp].sort().map(([app, a]) => h("div", { class: ["app-card", a.online === 0 && "app-card-bad"] },
      h("div", { class: "app-card-head" }, h("span", { class: "app-tag app-tag-lg" }, app), pill(`${a.online}/${a.total} ${t("exec.online")}`, a.online === a.total ? "ok" : a.online ? "warn" : "bad")),
      h("div", { class: "app-card-nums" },
        h("div", {}, h("b", {}, fmtNum(a.cap)), h("span", {}, t("exec.capacity"))),
        h("div", {}, h("b", {}, fmtNum(a.handlers.size)), h("span", {}, t("exec.handlers")))))));
    const list = executors.filter(e => showGone || e.state !== "gone").sort((a, b) => a.app.localeCompare(b.app) || a.id - b.id);
    const now = Date.now();
    syncTable(tbody, list, e => e.id, [
      { class: "num mono", sig: e => e.id, cell: e => String(e.id) },
      { sig: e => e.app, cell: e => h("span", { class: "app-tag" }, e.app) },
      { class: "mono", sig: e => e.instance_id + e.version, cell: e => [e.instance_id, e.version ? h("div", { class: "sub-line" }, e.version) : null] },
      { class: "mono", sig: e => e.address, cell: e => e.address },
      { class: "num", sig: e => e.capacity, cell: e => fmtNum(e.capacity) },
      { sig: e => e.handlers, cell: e => h("div", { class: "chips chips-static" }, (e.handlers || "").split(",").filter(Boolean).map(x => h("span", { class: "chip chip-static mono" }, x))) },
      { sig: e => e.state, cell: e => badge(e.state) },
      { sig: e => e.last_heartbeat + (now - Date.parse(e.last_heartbeat) > 10000 ? "stale" : ""), cell: e => h("span", { class: e.state === "online" && now - Date.parse(e.last_heartbeat) > 10000 ? "text-warn" : "", title: fmtRel(e.last_heartbeat) }, relTime(e.last_heartbeat)) },
      { sig: e => e.registered_at, cell: e => absTime(e.registered_at) },
      { sig: e => `${e.drain_requested}${e.state}`, cell: e => drainCell(e) },
    ], e => ({ class: e.state === "gone" ? "row-dim" : "" }));
    table.hidden = !list.length;
    empty.hidden = !!list.length;
    document.getElementById("exec-count").textContent = t("exec.count", { n: list.length });
  }

  // Drain (operators): no new slots, queued ones given back; running ones
  // finish there. Undrain lets it take slots again.
  function drainCell(e) {
    const tag = e.drain_requested ? pill(t("exec.drained"), "warn") : null;
    if (!ctx.can("operator") || e.state === "gone" || e.state === "lost") return tag;
    const btn = h("button", { class: "btn btn-sm", type: "button", "data-act": e.drain_requested ? "undrain" : "drain", "data-id": String(e.id) },
      t(e.drain_requested ? "exec.undrain" : "exec.drain"));
    btn.addEventListener("click", async () => {
      if (e.drain_requested) {
        try { await api("POST", `/executors/${e.id}/undrain`); toast(t("exec.undrained", { name: e.instance_id })); ctx.refreshNow(); }
        catch (err) { toast(err.message, "error"); }
        return;
      }
      const ok = await confirmDialog({
        id: "drain-dialog", title: t("exec.drainTitle", { name: e.instance_id }), danger: true, confirmLabel: t("exec.drain"),
        message: t("exec.drainConfirm"),
        onConfirm: () => api("POST", `/executors/${e.id}/drain`),
      });
      if (ok) { toast(t("exec.draining", { name: e.instance_id })); ctx.refreshNow(); }
    });
    return h("div", { class: "btn-row-inline" }, tag, btn);
  }

  return { refresh, interval: () => 3000 };
}
