// Alarm groups (the alarms of one run, of one job within an hour, of one
// kind and app within an hour), newest first, with their count; the
// server filters them (severity, "Open only"). A group's count opens its
// alarms below the table (keyset paged). Operators acknowledge or resolve
// a group, a selection of groups, or every alarm matching the filter, in
// one request (POST /alarms/bulk), and single alarms in the drill-down.
import { api, qs } from "../api.js";
import { t, tOr, alarmText, srvText } from "../i18n.js";
import { h, pageHead, syncTable, absTime, relTime, emptyState, pill, button, toast } from "../dom.js";

let severity = "";
let openOnly = false;

const PAGE = 50;

export default function mount(root, ctx) {
  const groups = new Map();
  const selected = new Set();
  let allMatching = false; // "select all matching the filter"
  let matching = 0; // alarms matching the filter
  let capped = false; // … at least that many
  let before = null;
  let more = false;
  let gen = 0; // filter generation: answers to an older filter are dropped
  const tbody = h("tbody");
  const empty = h("div", { hidden: true }, emptyState(t("alarm.none"), t("alarm.noneSub")));
  const sevSeg = h("div", { class: "segmented", id: "alarm-sev" }, ["", "critical", "warning", "info"].map(sv =>
    h("button", { type: "button", class: sv === severity && "active", dataset: { sev: sv }, onclick: () => {
      severity = sv;
      sevSeg.querySelectorAll("button").forEach(b => b.classList.toggle("active", b.dataset.sev === sv));
      reload();
    } }, sv ? t("severity." + sv) : t("alarm.all"))));
  const openBox = h("input", { type: "checkbox", id: "alarm-open", checked: openOnly });
  openBox.addEventListener("change", () => { openOnly = openBox.checked; reload(); });
  const moreBtn = button(t("runs.loadOlder"), { id: "alarms-more", onclick: () => loadOlder() });
  const pageBox = h("input", { type: "checkbox", id: "alarm-select-page", title: t("alarm.selectPage"), onchange: () => {
    allMatching = false;
    for (const g of visible()) pageBox.checked ? selected.add(g.id) : selected.delete(g.id);
    render();
  } });
  const op = ctx.can("operator");
  const table = h("table", { class: "table", id: "alarms-table" },
    h("thead", {}, h("tr", {}, op ? h("th", { class: "col-check" }, pageBox) : null, h("th", {}, t("col.time")), h("th", {}, t("col.severity")),
      h("th", {}, t("col.kind")), h("th", {}, t("alarm.count")), h("th", {}, t("col.app")), h("th", {}, t("col.job")), h("th", {}, t("col.run")),
      h("th", {}, t("col.message")), h("th", {}, t("col.raisedBy")), h("th", {}, t("alarm.state")))),
    tbody);

  // The bulk bar: what is selected, "select all matching", the actions.
  const selInfo = h("span", { id: "alarm-selection", class: "muted" });
  const matchBtn = h("button", { type: "button", class: "btn btn-link btn-sm", id: "alarm-select-matching", onclick: () => {
    allMatching = !allMatching;
    selected.clear();
    if (allMatching) for (const g of visible()) selected.add(g.id);
    render();
  } });
  const bulkAck = button(t("alarm.ack"), { id: "alarm-bulk-ack", size: "sm", onclick: () => bulk("ack") });
  const bulkResolve = button(t("alarm.resolve"), { id: "alarm-bulk-resolve", size: "sm", kind: "primary", onclick: () => bulk("resolve") });
  const bulkBar = h("div", { class: "alarm-bulk", id: "alarm-bulk", hidden: !op }, selInfo, matchBtn, bulkAck, bulkResolve);

  // The drill-down: the alarms of one group, keyset paged.
  const detail = h("div", { class: "card alarm-detail", id: "alarm-group-detail", hidden: true });
  let open = null; // {id, alarms: Map, before, more, total}

  root.append(pageHead(t("alarm.title"), t("alarm.sub")),
    h("div", { class: "card" }, h("div", { class: "toolbar" }, sevSeg, h("label", { class: "inline-field" }, openBox, h("span", {}, t("alarm.openOnly"))), bulkBar),
      h("div", { class: "table-wrap" }, table), empty, h("div", { class: "table-foot" }, moreBtn)),
    detail);

  function sevKind(sv) { return { critical: "bad", error: "bad", warning: "warn", warn: "warn" }[sv] || "info"; }
  function filter() { return { severity, open: openOnly ? 1 : "" }; }
  function count() { return capped ? matching + "+" : String(matching); }
  function visible() { return [...groups.values()].sort((a, b) => b.id - a.id); }

  function render() {
    const list = visible();
    const cols = [
      { sig: g => g.last_at + g.first_at, cell: g => [absTime(g.last_at), g.count > 1 ? h("div", { class: "sub-line" }, t("alarm.since"), " ", relTime(g.first_at)) : h("div", { class: "sub-line" }, relTime(g.last_at))] },
      { sig: g => g.severity, cell: g => pill(tOr("severity." + g.severity, g.severity), sevKind(g.severity)) },
      { class: "mono", sig: g => JSON.stringify(g.kinds), cell: g => g.kinds.map(k => h("div", {}, g.kinds.length > 1 ? `${k.kind} ×${k.n}` : k.kind)) },
      { class: "alarm-count", sig: g => g.count + "/" + (open && open.id === g.id), cell: g => h("button", { type: "button", class: ["btn", "btn-sm", open && open.id === g.id ? "btn-primary" : "btn-secondary"],
        title: t("alarm.showMembers"), dataset: { group: g.id }, onclick: () => openGroup(g.id) }, String(g.count)) },
      { sig: g => g.latest.app || "", cell: g => g.latest.app || h("span", { class: "muted", title: t("alarm.platform") }, "—") },
      // Names, ids on hover ("job 7" once the job is deleted).
      { sig: g => (g.latest.job_id || "") + (g.latest.job_name || ""), cell: g => jobCell(g.latest) },
      { sig: g => g.latest.run_id || "", cell: g => g.latest.run_id ? h("a", { href: "#/runs/" + g.latest.run_id, class: "link", title: t("common.idTip", { id: g.latest.run_id }) }, t("common.runN", { id: g.latest.run_id })) : "—" },
      { class: "msg-cell", sig: g => alarmText(g.latest), cell: g => alarmText(g.latest) },
      { class: "mono muted", sig: g => g.latest.raised_by, cell: g => g.latest.raised_by },
      { class: "alarm-state", sig: g => `${g.open}/${g.unacked}/${g.count}/${g.latest.resolved_by || ""}`, cell: g => groupState(g) },
    ];
    if (op) cols.unshift({ class: "col-check", sig: g => String(selected.has(g.id)), cell: g => h("input", { type: "checkbox", class: "alarm-check", checked: selected.has(g.id),
      dataset: { group: g.id }, onchange: ev => {
        allMatching = false;
        ev.target.checked ? selected.add(g.id) : selected.delete(g.id);
        render();
      } }) });
    syncTable(tbody, list, g => g.id, cols);
    table.hidden = !list.length;
    empty.hidden = !!list.length;
    moreBtn.hidden = !more;
    pageBox.checked = list.length > 0 && list.every(g => selected.has(g.id));
    const n = [...selected].reduce((s, id) => s + (groups.get(id) ? groups.get(id).count : 0), 0);
    selInfo.textContent = allMatching ? t("alarm.allMatchingSelected", { n: count() }) : selected.size ? t("alarm.selected", { groups: selected.size, n }) : "";
    matchBtn.textContent = allMatching ? t("alarm.clearSelection") : t("alarm.selectMatching", { n: count() });
    matchBtn.hidden = !matching;
    bulkAck.disabled = bulkResolve.disabled = !allMatching && !selected.size;
    renderDetail();
  }

  function jobCell(a) {
    return a.job_id ? h("a", { href: "#/jobs/" + a.job_id, class: "link alarm-job", title: t("common.idTip", { id: a.job_id }) },
      a.job_name ? (a.app ? a.app + "/" : "") + a.job_name : t("common.jobN", { id: a.job_id })) : "—";
  }

  /** groupState shows how far people got with a group, and the next step for an operator (the whole group in one request). */
  function groupState(g) {
    const act = (what, label) => op ? h("button", { type: "button", class: "btn btn-secondary btn-sm", dataset: { act: what, group: g.id },
      onclick: ev => { ev.currentTarget.disabled = true; send({ action: what, group_ids: [g.id] }); } }, label) : null;
    if (!g.open) {
      const l = g.latest;
      return h("span", { title: fmtWho(l.resolved_by, l.resolved_at) + (l.resolved_reason ? " · " + reasonText(l) : "") },
        pill(t("alarm.resolved"), "ok"), h("div", { class: "sub-line" }, l.resolved_by === "shardjob" ? reasonText(l) : l.resolved_by));
    }
    const some = g.open < g.count ? h("div", { class: "sub-line" }, t("alarm.openOf", { open: g.open, n: g.count })) : null;
    return h("div", { class: "alarm-actions" },
      g.unacked ? pill(t("alarm.open"), "bad") : h("span", { title: fmtWho(g.latest.acked_by, g.latest.acked_at) }, pill(t("alarm.acked"), "warn"), h("div", { class: "sub-line" }, g.latest.acked_by)),
      g.unacked ? act("ack", t("alarm.ack")) : null, act("resolve", t("alarm.resolve")), some);
  }
  function reasonText(a) { return srvText(a.resolved_code, a.resolved_args, a.resolved_reason); }
  function fmtWho(by, at) { return at ? `${by} · ${new Date(at).toLocaleString()}` : by || ""; }

  async function bulk(action) {
    const body = allMatching ? { action, all_matching: true, filter: { severity, open: openOnly } } : { action, group_ids: [...selected] };
    await send(body);
  }

  /** send posts one bulk request, says how many alarms changed and reloads. */
  async function send(body) {
    try {
      const res = await api("POST", "/alarms/bulk", body);
      toast(t("alarm.bulkDone." + body.action, { n: res.changed }));
      selected.clear();
      allMatching = false;
    } catch (e) {
      toast(e.message, "error");
    }
    await reload();
    if (open) await loadMembers(true);
  }

  // The drill-down.
  async function openGroup(id) {
    if (open && open.id === id) { open = null; render(); return; }
    open = { id, alarms: new Map(), before: null, more: false, total: 0 };
    await loadMembers(true);
    detail.scrollIntoView({ block: "nearest" });
  }
  async function loadMembers(fresh) {
    if (!open) return;
    const o = open;
    const res = await api("GET", `/alarm-groups/${o.id}/alarms` + qs({ before: fresh ? null : o.before }));
    if (open !== o) return;
    if (fresh) o.alarms.clear();
    res.alarms.forEach(a => o.alarms.set(a.id, a));
    o.total = res.total;
    o.more = res.more;
    if (res.alarms.length) o.before = res.alarms[res.alarms.length - 1].id;
    render();
  }
  function renderDetail() {
    detail.hidden = !open;
    if (!open) { detail.replaceChildren(); return; }
    const rows = [...open.alarms.values()].sort((a, b) => b.id - a.id).map(a => h("tr", { dataset: { key: a.id } },
      h("td", {}, absTime(a.at)), h("td", {}, pill(tOr("severity." + a.severity, a.severity), sevKind(a.severity))), h("td", { class: "mono" }, a.kind),
      h("td", { class: "msg-cell" }, alarmText(a)), h("td", { class: "alarm-state" }, alarmState(a))));
    detail.replaceChildren(
      h("div", { class: "card-head" }, h("h3", {}, t("alarm.groupTitle", { id: open.id })),
        h("span", { class: "muted", id: "alarm-group-count" }, t("alarm.showing", { shown: open.alarms.size, total: open.total })),
        button(t("common.close"), { size: "sm", id: "alarm-group-close", onclick: () => { open = null; render(); } })),
      h("div", { class: "table-wrap" }, h("table", { class: "table", id: "alarm-members" },
        h("thead", {}, h("tr", {}, h("th", {}, t("col.time")), h("th", {}, t("col.severity")), h("th", {}, t("col.kind")), h("th", {}, t("col.message")), h("th", {}, t("alarm.state")))),
        h("tbody", {}, rows))),
      h("div", { class: "table-foot", hidden: !open.more }, button(t("runs.loadOlder"), { id: "alarm-members-more", onclick: () => loadMembers(false) })));
  }
  /** alarmState is one alarm's state in the drill-down, with its own buttons. */
  function alarmState(a) {
    if (a.resolved_at) return h("span", { title: fmtWho(a.resolved_by, a.resolved_at) }, pill(t("alarm.resolved"), "ok"),
      h("div", { class: "sub-line" }, a.resolved_by === "shardjob" ? reasonText(a) : a.resolved_by));
    const act = (what, label) => op ? h("button", { type: "button", class: "btn btn-secondary btn-sm", dataset: { act: what, alarm: a.id }, onclick: async ev => {
      ev.currentTarget.disabled = true;
      try {
        const res = await api("POST", `/alarms/${a.id}/${what}`);
        if (open) open.alarms.set(res.id, res);
        toast(t("alarm.done." + what, { id: a.id }));
      } catch (e) {
        toast(e.message, "error");
      }
      await reload();
    } }, label) : null;
    return h("div", { class: "alarm-actions" },
      a.acked_at ? h("span", { title: fmtWho(a.acked_by, a.acked_at) }, pill(t("alarm.acked"), "warn"), h("div", { class: "sub-line" }, a.acked_by)) : pill(t("alarm.open"), "bad"),
      a.acked_at ? null : act("ack", t("alarm.ack")), act("resolve", t("alarm.resolve")));
  }

  async function loadOlder() {
    if (!before) return;
    const g = gen;
    const res = await api("GET", "/alarms" + qs({ ...filter(), before, limit: PAGE }));
    if (g !== gen) return;
    res.groups.forEach(x => groups.set(x.id, x));
    more = res.more;
    if (res.groups.length) before = res.groups[res.groups.length - 1].id;
    render();
  }

  /** reload starts again from the newest groups of the filter. */
  async function reload() {
    gen++;
    groups.clear();
    selected.clear();
    allMatching = false;
    before = null;
    await refresh();
  }

  /** refresh updates the newest page (and keeps older pages loaded). */
  async function refresh() {
    const g = gen;
    const res = await api("GET", "/alarms" + qs({ ...filter(), limit: PAGE }));
    if (!ctx.isCurrent() || g !== gen) return;
    const fresh = new Set(res.groups.map(x => x.id));
    const oldest = res.groups.length ? res.groups[res.groups.length - 1].id : 0;
    // Groups of the newest page that no longer match (resolved, with "Open only") go.
    for (const id of [...groups.keys()]) if (id >= oldest && !fresh.has(id)) { groups.delete(id); selected.delete(id); }
    res.groups.forEach(x => groups.set(x.id, x));
    matching = res.matching_alarms;
    capped = res.matching_capped;
    if (before === null) {
      more = res.more;
      before = res.groups.length ? oldest : null;
    }
    render();
  }

  return { refresh, interval: () => 5000 };
}
