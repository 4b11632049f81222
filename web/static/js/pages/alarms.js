// Alarm events (missed fires, dead slots, ...), newest first, with paging;
// operators acknowledge (someone is on it) and resolve them; "Open" shows
// the ones nobody has resolved.
import { api, qs } from "../api.js";
import { t, tOr, alarmText } from "../i18n.js";
import { h, pageHead, syncTable, absTime, relTime, emptyState, pill, button, toast } from "../dom.js";

let severity = "";
let openOnly = false;

export default function mount(root, ctx) {
  const alarms = new Map();
  let before = null;
  let more = true;
  const tbody = h("tbody");
  const empty = h("div", { hidden: true }, emptyState(t("alarm.none"), t("alarm.noneSub")));
  const sevSeg = h("div", { class: "segmented", id: "alarm-sev" }, ["", "critical", "warning", "info"].map(sv =>
    h("button", { type: "button", class: sv === severity && "active", dataset: { sev: sv }, onclick: () => {
      severity = sv;
      sevSeg.querySelectorAll("button").forEach(b => b.classList.toggle("active", b.dataset.sev === sv));
      render();
    } }, sv ? t("severity." + sv) : t("alarm.all"))));
  const openBox = h("input", { type: "checkbox", id: "alarm-open", checked: openOnly });
  openBox.addEventListener("change", () => { openOnly = openBox.checked; render(); });
  const moreBtn = button(t("runs.loadOlder"), { id: "alarms-more", onclick: () => loadOlder() });
  const table = h("table", { class: "table", id: "alarms-table" },
    h("thead", {}, h("tr", {}, h("th", {}, t("col.time")), h("th", {}, t("col.severity")), h("th", {}, t("col.kind")),
      h("th", {}, t("col.app")), h("th", {}, t("col.job")), h("th", {}, t("col.run")), h("th", {}, t("col.message")), h("th", {}, t("col.raisedBy")),
      h("th", {}, t("alarm.state")))),
    tbody);
  root.append(pageHead(t("alarm.title"), t("alarm.sub")),
    h("div", { class: "card" }, h("div", { class: "toolbar" }, sevSeg, h("label", { class: "inline-field" }, openBox, h("span", {}, t("alarm.openOnly")))), h("div", { class: "table-wrap" }, table), empty, h("div", { class: "table-foot" }, moreBtn)));

  function sevKind(sv) { return { critical: "bad", error: "bad", warning: "warn", warn: "warn" }[sv] || "info"; }

  function render() {
    const list = [...alarms.values()].filter(a => !severity || a.severity === severity || (severity === "warning" && a.severity === "warn"))
      .filter(a => !openOnly || !a.resolved_at).sort((a, b) => b.id - a.id);
    syncTable(tbody, list, a => a.id, [
      { sig: a => a.at, cell: a => [absTime(a.at), h("div", { class: "sub-line" }, relTime(a.at))] },
      { sig: a => a.severity, cell: a => pill(tOr("severity." + a.severity, a.severity), sevKind(a.severity)) },
      { class: "mono", sig: a => a.kind, cell: a => a.kind },
      { sig: a => a.app || "", cell: a => a.app || h("span", { class: "muted", title: t("alarm.platform") }, "—") },
      // Names, ids on hover ("job 7" once the job is deleted).
      { sig: a => (a.job_id || "") + (a.job_name || ""), cell: a => a.job_id ? h("a", { href: "#/jobs/" + a.job_id, class: "link alarm-job", title: t("common.idTip", { id: a.job_id }) },
        a.job_name ? (a.app ? a.app + "/" : "") + a.job_name : t("common.jobN", { id: a.job_id })) : "—" },
      { sig: a => a.run_id || "", cell: a => a.run_id ? h("a", { href: "#/runs/" + a.run_id, class: "link", title: t("common.idTip", { id: a.run_id }) }, t("common.runN", { id: a.run_id })) : "—" },
      { class: "msg-cell", sig: a => alarmText(a), cell: a => alarmText(a) },
      { class: "mono muted", sig: a => a.raised_by, cell: a => a.raised_by },
      { class: "alarm-state", sig: a => (a.acked_by || "") + (a.resolved_by || "") + (a.resolved_at || ""), cell: a => stateCell(a) },
    ]);
    table.hidden = !list.length;
    empty.hidden = !!list.length;
    moreBtn.hidden = !more || !alarms.size;
  }

  /** stateCell shows who acknowledged or resolved an alarm, and the next
   * step for an operator. */
  function stateCell(a) {
    if (a.resolved_at) return h("span", { title: fmtWho(a.resolved_by, a.resolved_at) }, pill(t("alarm.resolved"), "ok"), h("div", { class: "sub-line" }, a.resolved_by));
    const act = (what, label) => ctx.can("operator") ? h("button", { type: "button", class: "btn btn-secondary btn-sm", dataset: { act: what, alarm: a.id }, onclick: async ev => {
      ev.currentTarget.disabled = true;
      try {
        const res = await api("POST", `/alarms/${a.id}/${what}`);
        alarms.set(res.id, res);
        toast(t("alarm.done." + what, { id: a.id }));
      } catch (e) {
        toast(e.message, "error");
        ctx.refreshNow();
      }
      render();
    } }, label) : null;
    return h("div", { class: "alarm-actions" },
      a.acked_at ? h("span", { title: fmtWho(a.acked_by, a.acked_at) }, pill(t("alarm.acked"), "warn"), h("div", { class: "sub-line" }, a.acked_by)) : pill(t("alarm.open"), "bad"),
      a.acked_at ? null : act("ack", t("alarm.ack")), act("resolve", t("alarm.resolve")));
  }
  function fmtWho(by, at) { return `${by} · ${new Date(at).toLocaleString()}`; }

  async function loadOlder() {
    if (!before) return;
    const res = await api("GET", "/alarms" + qs({ before }));
    res.alarms.forEach(a => alarms.set(a.id, a));
    more = res.alarms.length >= 200;
    if (res.alarms.length) before = res.alarms[res.alarms.length - 1].id;
    render();
  }

  async function refresh() {
    const res = await api("GET", "/alarms");
    if (!ctx.isCurrent()) return;
    res.alarms.forEach(a => alarms.set(a.id, a));
    if (before === null) {
      more = res.alarms.length >= 200;
      before = res.alarms.length ? res.alarms[res.alarms.length - 1].id : null;
    }
    render();
  }

  return { refresh, interval: () => 5000 };
}
