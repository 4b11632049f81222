// Workflows (issue 22): the list, and one workflow's page with its
// definition, its graph drawn from the admin's layered layout (nodes
// coloured by the state of a run when one is shown), a node's details on
// click, and the workflow's runs.
import { api } from "../api.js";
import { t, tOr, fmtDateTime, srvText, fieldTexts } from "../i18n.js";
import { fieldSet } from "./users.js";
import { backfillDialog } from "./backfill.js";
import { h, s, pageHead, syncTable, absTime, relTime, emptyState, badge, card, kv, fill, button, modal, toast, confirmDialog, icon } from "../dom.js";

// Grid units of the layout to pixels.
const LAYER_W = 210, ROW_H = 66, NODE_W = 160, NODE_H = 42, PAD = 16;

/** nodeWhat says what a node runs: a job (linked when its id is known) or an inline handler. */
function nodeWhat(n) {
  if (n.job) {
    const label = n.job.name ? (n.job.app ? n.job.app + "/" : "") + n.job.name : "#" + n.job.id;
    return n.job.id ? h("a", { href: `#/jobs/${n.job.id}` }, label) : label;
  }
  return h("span", { class: "mono" }, n.handler);
}

/** waitLabel names what a node of app waits for, as the admin's reasons do. */
function waitLabel(wt, app) {
  const ref = wt.job || wt.workflow || {};
  const name = (ref.app || app) + "/" + ref.name;
  return wt.workflow ? t("workflows.waitWorkflow", { name }) : name;
}

function nodeSub(n) {
  if (n.job) return n.job.name || "#" + n.job.id;
  return n.handler;
}

/** clip shortens a label to fit a node box. */
function clip(str, max) {
  return str.length > max ? str.slice(0, max - 1) + "…" : str;
}

/**
 * dagSVG draws a workflow's layout: edges as polylines through their bend
 * points, nodes as boxes with the node key and what it runs. states maps a
 * node key to a state (colours the node); onPick(key) is called on a click;
 * notes maps a node key to a text shown on the node in place of what it
 * runs, and in its tooltip (the reason of a waiting node).
 */
export function dagSVG(layout, nodes, states, onPick, notes) {
  const byKey = new Map(nodes.map(n => [n.key, n]));
  const px = p => PAD + p.x * LAYER_W + NODE_W / 2;
  const py = p => PAD + p.y * ROW_H + NODE_H / 2;
  const width = PAD * 2 + Math.max(0, layout.layers - 1) * LAYER_W + NODE_W;
  const height = PAD * 2 + Math.max(0, layout.rows - 1) * ROW_H + NODE_H;
  const edges = layout.edges.map(e => {
    const pts = e.points.map(p => [px(p), py(p)]);
    // Leave the parent at its right side, reach the child at its left.
    pts[0][0] += NODE_W / 2;
    pts[pts.length - 1][0] -= NODE_W / 2 + 4;
    return s("polyline", { class: "dag-edge", points: pts.map(p => p.join(",")).join(" "), "marker-end": "url(#dag-arrow)",
      dataset: { from: e.from, to: e.to } });
  });
  const boxes = layout.nodes.map(p => {
    const n = byKey.get(p.key) || { key: p.key };
    const st = states && states[p.key];
    const note = notes && notes[p.key];
    const g = s("g", { class: ["dag-node", st && "st-" + st], transform: `translate(${px(p) - NODE_W / 2},${py(p) - NODE_H / 2})`,
      dataset: { node: p.key, state: st || "" }, tabindex: 0, role: "button",
      onclick: () => onPick && onPick(p.key),
      onkeydown: ev => { if (ev.key === "Enter" && onPick) onPick(p.key); } },
    s("title", {}, p.key + (st ? " · " + tOr("status." + st, st) : "") + (note ? " · " + note : "")),
    s("rect", { width: NODE_W, height: NODE_H, rx: 7 }),
    s("text", { x: 10, y: 17, class: "dag-key" }, clip(p.key, 20)),
    s("text", { x: 10, y: 32, class: ["dag-sub", note && "dag-note"] }, clip(note || nodeSub(n) || "", 24)));
    return g;
  });
  return s("svg", { class: "dag", id: "dag-svg", viewBox: `0 0 ${width} ${height}`, width, height, role: "img", "aria-label": t("workflows.graph") },
    s("defs", {}, s("marker", { id: "dag-arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" },
      s("path", { d: "M0,0 L10,5 L0,10 z", class: "dag-arrow" }))),
    s("g", {}, edges), s("g", {}, boxes));
}

function scheduleText(w) {
  if (!w.cron) return h("span", { class: "muted" }, t("workflows.manualOnly"));
  return [h("span", { class: "mono" }, w.cron), " ", h("span", { class: "muted" }, w.time_zone)];
}

/** triggerDialog starts a run of w; resolves the run (or null when dismissed). */
async function triggerDialog(w) {
  const { field, setErrors, errs } = fieldSet();
  const date = h("input", { id: "wf-date", name: "business_date", autocomplete: "off", placeholder: "YYYY-MM-DD" });
  const params = h("textarea", { id: "wf-params", name: "params", rows: 3, class: "mono", spellcheck: "false", placeholder: '{"region": "eu"}' });
  let run = null;
  const v = await modal({
    title: t("workflows.triggerTitle", { name: w.name }), id: "workflow-trigger-dialog",
    body: h("div", { class: "form-stack" },
      field("business_date", t("workflows.businessDate"), date, t("workflows.dateHelp", { zone: w.time_zone })),
      field("params", t("workflows.params"), params, t("workflows.paramsHelp"))),
    actions: [{ label: t("common.cancel"), value: "cancel" }, { label: t("workflows.trigger"), kind: "primary", value: "ok", submit: true }],
    onSubmit: async () => {
      setErrors({});
      const req = {};
      if (date.value.trim()) req.business_date = date.value.trim();
      if (params.value.trim()) req.params = params.value.trim();
      try {
        run = (await api("POST", `/workflows/${w.id}/trigger`, req)).run;
      } catch (e) {
        const fields = fieldTexts(e);
        setErrors(fields);
        throw Object.keys(fields).some(k => errs[k]) ? new Error(t("common.checkFields")) : e;
      }
      return "ok";
    },
  });
  return v === "ok" ? run : null;
}

/** detail is #/workflows/{id}. */
function detail(root, ctx) {
  const id = Number(ctx.params.id);
  let wf = null, layout = null, picked = null;
  let chosenRun = Number(ctx.query.get("run")) || 0; // 0: the latest
  let runDetail = null, drawnSig = "";
  const title = h("h1", {});
  const sub = h("div", { class: "page-sub" });
  const defBox = h("div");
  const graph = h("div", { class: "dag-wrap", id: "workflow-graph" });
  const nodeBox = h("div", { id: "workflow-node", hidden: true });
  const runLabel = h("div", { class: "muted", id: "workflow-run-shown" });
  const runCancel = button(t("workflows.cancelRun"), { size: "sm", icon: "stop", id: "workflow-cancel", onclick: () => cancelRun() });
  const actions = h("div", { class: "page-actions" });
  const runsBody = h("tbody");
  const runsEmpty = h("div", { hidden: true }, emptyState(t("workflows.noRuns")));
  const runsTable = h("table", { class: "table", id: "workflow-runs" },
    h("thead", {}, h("tr", {}, h("th", { class: "num" }, t("col.run")), h("th", {}, t("workflows.businessDate")), h("th", {}, t("col.trigger")),
      h("th", {}, t("col.status")), h("th", {}, t("col.scheduled")), h("th", {}, t("col.error")))), runsBody);
  root.append(
    h("div", { class: "breadcrumbs" }, h("a", { href: "#/workflows" }, t("nav.workflows")), h("span", {}, "/"), h("span", { id: "crumb" }, "#" + id)),
    h("div", { class: "page-head" }, h("div", { class: "page-title" }, title, sub), actions),
    card(t("workflows.definition"), defBox),
    card(t("workflows.graph"), [h("div", { class: "toolbar" }, runLabel, h("div", { class: "spacer" }), runCancel), graph, nodeBox], { id: "workflow-graph-card", sub: t("workflows.graphSub") }),
    card(t("workflows.runs"), [h("div", { class: "table-wrap" }, runsTable), runsEmpty]));

  function pick(key) {
    picked = key;
    const n = wf.nodes.find(x => x.key === key);
    for (const g of graph.querySelectorAll(".dag-node")) g.classList.toggle("picked", g.dataset.node === key);
    const parents = (wf.edges || []).filter(e => e.to === key).map(e => e.from);
    const children = (wf.edges || []).filter(e => e.from === key).map(e => e.to);
    nodeBox.hidden = false;
    const nr = nodeRunOf(key);
    const ended = runDetail && !["pending", "running"].includes(runDetail.run.status);
    const rerunBtn = ended && ctx.can("operator") ? button(t("workflows.rerunFrom"), { icon: "retry", id: "workflow-rerun", onclick: () => rerun(key) }) : null;
    fill(nodeBox, h("div", { class: "node-panel" }, h("div", { class: "node-panel-head" }, h("h4", {}, key), rerunBtn), kv([
      nr ? [t("col.status"), [badge(nr.status), nr.job_run_id ? [" ", h("a", { href: `#/runs/${nr.job_run_id}`, id: "workflow-node-run" }, t("workflows.jobRun", { id: nr.job_run_id }))] : null]] : null,
      nr && nr.reason ? [nr.status === "waiting" ? t("workflows.waitingFor") : t("col.error"),
        h("span", { id: "workflow-node-reason" }, srvText(nr.reason_code, nr.reason_args, nr.reason))] : null,
      nr && nr.result !== undefined ? [t("workflows.result"), h("pre", { class: "json-pre", id: "workflow-node-result" }, JSON.stringify(nr.result, null, 2))] : null,
      nr && nr.result_hidden ? [t("workflows.result"), h("span", { class: "muted", id: "workflow-node-result-hidden", title: nr.result_hidden }, t("workflows.resultHidden"))] : null,
      [n.job ? t("col.job") : t("col.handler"), nodeWhat(n)],
      n.job ? null : [t("col.slots"), String(n.slots || 1)],
      n.job || !n.retry_max ? null : [t("workflows.retries"), t("workflows.retriesValue", { n: n.retry_max, ms: n.retry_backoff_ms || 1000 })],
      n.params ? [t("workflows.params"), h("code", {}, n.params)] : null,
      [t("workflows.startRule"), tOr("workflows.start." + n.start, n.start)],
      n.wait_for && n.wait_for.length ? [t("workflows.waits"), t("workflows.waitsValue", {
        waits: n.wait_for.map(wt => waitLabel(wt, wf.app)).join(", "), timeout: n.wait_timeout,
        then: tOr("workflows.onTimeout." + n.on_timeout, n.on_timeout) })] : null,
      [t("workflows.parents"), parents.length ? parents.join(", ") : "—"],
      [t("workflows.children"), children.length ? children.join(", ") : "—"],
    ])));
  }

  /** rerun runs the run shown again from node key, after a confirmation. */
  async function rerun(key) {
    const run = runDetail.run;
    let done = null;
    const ok = await confirmDialog({
      id: "workflow-rerun-dialog", title: t("workflows.rerunTitle", { id: run.id }), confirmLabel: t("workflows.rerunFrom"),
      message: h("p", {}, t("workflows.rerunConfirm", { node: key, date: run.business_date })),
      onConfirm: async () => { done = await api("POST", `/workflow-runs/${run.id}/rerun`, { from: [key] }); },
    });
    if (!ok) return;
    toast(t("workflows.rerunStarted", { id: run.id, nodes: done.nodes.join(", ") }));
    chosenRun = run.id;
    ctx.refreshNow();
  }

  /** cancelRun cancels the run shown, after a confirmation. */
  async function cancelRun() {
    const run = runDetail.run;
    let done = null;
    const ok = await confirmDialog({
      id: "workflow-cancel-dialog", title: t("workflows.cancelTitle", { id: run.id }), confirmLabel: t("workflows.cancelRun"), danger: true,
      message: h("p", {}, t("workflows.cancelConfirm", { date: run.business_date })),
      onConfirm: async () => { done = await api("POST", `/workflow-runs/${run.id}/cancel`); },
    });
    if (!ok) return;
    toast(t("workflows.cancelled", { id: run.id, jobs: done.job_runs.length }));
    chosenRun = run.id;
    ctx.refreshNow();
  }

  /** remove deletes the workflow after a confirmation (refused while a run
   * is active: the dialog shows why). */
  async function remove() {
    const ok = await confirmDialog({
      id: "workflow-delete-dialog", title: t("wfform.deleteTitle", { name: wf.name }), confirmLabel: t("wfform.delete"), danger: true,
      message: h("p", {}, t("wfform.deleteConfirm", { name: wf.name })),
      onConfirm: async () => { await api("DELETE", `/workflows/${id}`); },
    });
    if (!ok) return;
    toast(t("wfform.deleted", { name: wf.name }));
    ctx.navigate("#/workflows");
  }

  /** nodeRunOf is the node's run in the run shown (its latest rerun). */
  function nodeRunOf(key) {
    if (!runDetail) return null;
    let out = null;
    for (const n of runDetail.nodes) if (n.node_key === key && (!out || n.rerun >= out.rerun)) out = n;
    return out;
  }

  async function refresh() {
    const [w, runs] = await Promise.all([api("GET", `/workflows/${id}`), api("GET", `/workflows/${id}/runs?limit=50`)]);
    if (!layout || layout.version !== w.version) layout = await api("GET", `/workflows/${id}/layout`);
    const shownID = chosenRun || (runs.runs.length ? runs.runs[0].id : 0);
    runDetail = shownID ? await api("GET", `/workflow-runs/${shownID}`) : null;
    if (!ctx.isCurrent()) return;
    if (!wf && ctx.can("operator")) {
      fill(actions, button(t("workflows.backfill"), { icon: "retry", id: "workflow-backfill", onclick: async () => {
        const plan = await backfillDialog({ id: "workflow-backfill-dialog", title: t("workflows.bfTitle", { name: wf.name }),
          intro: t("workflows.bfIntro", { zone: wf.time_zone }), path: `/workflows/${wf.id}/backfill` });
        if (!plan) return;
        toast(t("workflows.backfilled", { created: plan.created, dates: plan.dates.length }));
        chosenRun = 0;
        ctx.refreshNow();
      } }), h("a", { href: `#/workflows/${id}/edit`, class: "btn btn-secondary", id: "workflow-edit" }, icon("edit"), h("span", {}, t("wfform.edit"))),
      button(t("wfform.delete"), { icon: "trash", id: "workflow-delete", onclick: () => remove() }),
      button(t("workflows.trigger"), { kind: "primary", icon: "play", id: "workflow-trigger", onclick: async () => {
        const run = await triggerDialog(wf);
        if (!run) return;
        toast(t("workflows.triggered", { id: run.id, date: run.business_date }));
        chosenRun = 0;
        ctx.refreshNow();
      } }));
    }
    const states = {}, notes = {};
    if (runDetail) for (const n of runDetail.nodes) {
      const nr = nodeRunOf(n.node_key);
      if (!nr) continue;
      states[n.node_key] = nr.status;
      if (nr.status === "waiting") notes[n.node_key] = srvText(nr.reason_code, nr.reason_args, nr.reason);
    }
    const sig = w.version + JSON.stringify(states) + JSON.stringify(notes);
    const redraw = drawnSig !== sig;
    drawnSig = sig;
    wf = w;
    runLabel.textContent = runDetail ? t("workflows.showing", { id: runDetail.run.id, date: runDetail.run.business_date, status: tOr("status." + runDetail.run.status, runDetail.run.status) }) : "";
    runLabel.dataset.run = runDetail ? String(runDetail.run.id) : "";
    runCancel.hidden = !(runDetail && ["pending", "running"].includes(runDetail.run.status) && ctx.can("operator"));
    title.textContent = w.name;
    document.getElementById("crumb").textContent = w.name;
    fill(sub, h("span", { class: "app-tag" }, w.app), " ", w.description || "");
    fill(defBox, kv([
      [t("col.app"), w.app],
      [t("col.schedule"), scheduleText(w)],
      w.calendar ? [t("workflows.calendar"), h("span", { id: "workflow-calendar" }, w.calendar, " · ",
        tOr("calrule." + (w.calendar_rule || "business_days_only"), w.calendar_rule),
        w.calendar_rule === "shift" ? [" · ", tOr("calshift." + w.calendar_shift, w.calendar_shift)] : null)] : null,
      [t("workflows.failurePolicy"), tOr("workflows.policy." + w.failure_policy, w.failure_policy)],
      [t("col.state"), t("jobs.state." + w.state)],
      [t("col.nextFire"), w.next_fire_at ? fmtDateTime(w.next_fire_at) : "—"],
      [t("workflows.nodes"), t("workflows.nodesValue", { nodes: w.node_count, edges: (w.edges || []).length })],
      [t("workflows.version"), String(w.version)],
      [t("col.updated"), [absTime(w.updated_at), " · ", w.updated_by]],
    ]));
    if (redraw) {
      fill(graph, dagSVG(layout, w.nodes, states, pick, notes));
      if (picked && w.nodes.some(n => n.key === picked)) pick(picked); else nodeBox.hidden = true;
    }
    syncTable(runsBody, runs.runs, r => r.id, [
      { class: "num mono", sig: r => r.id, cell: r => h("a", { href: `#/workflows/${id}?run=${r.id}`, class: "workflow-run-link", onclick: ev => {
        ev.preventDefault(); chosenRun = r.id; ctx.refreshNow();
      } }, String(r.id)) },
      { class: "mono", sig: r => r.business_date, cell: r => r.business_date },
      { sig: r => r.trigger, cell: r => tOr("workflows.trigger." + r.trigger, tOr("trigger." + r.trigger, r.trigger)) },
      { sig: r => r.status, cell: r => badge(r.status) },
      { sig: r => r.scheduled_at, cell: r => relTime(r.scheduled_at) },
      { sig: r => (r.reason_code || "") + (r.reason || ""), cell: r => r.reason ? srvText(r.reason_code, r.reason_args, r.reason) : "" },
    ]);
    for (const tr of runsBody.children) tr.classList.toggle("selected", runDetail !== null && tr.dataset.key === String(runDetail.run.id));
    runsTable.hidden = !runs.runs.length;
    runsEmpty.hidden = !!runs.runs.length;
  }
  return { refresh, interval: () => 10000 };
}

/** list is #/workflows. */
function list(root, ctx) {
  let wfs = [];
  const tbody = h("tbody");
  const empty = h("div", { hidden: true }, emptyState(t("workflows.none"), t("workflows.noneSub")));
  const count = h("span", { class: "muted", id: "workflows-count" });
  const table = h("table", { class: "table", id: "workflows-table" },
    h("thead", {}, h("tr", {}, h("th", {}, t("col.name")), h("th", {}, t("col.app")), h("th", { class: "num" }, t("workflows.nodes")),
      h("th", {}, t("col.schedule")), h("th", {}, t("col.nextFire")), h("th", {}, t("col.state")), h("th", {}, t("col.updated")))),
    tbody);
  const newBtn = ctx.can("operator") ? h("a", { href: "#/workflows/new", class: "btn btn-primary", id: "workflow-new" }, icon("plus"), h("span", {}, t("wfform.newTitle"))) : null;
  root.append(pageHead(t("workflows.title"), t("workflows.sub"), newBtn),
    h("div", { class: "card" }, h("div", { class: "toolbar" }, h("div", { class: "spacer" }), count),
      h("div", { class: "table-wrap" }, table), empty));

  function render() {
    syncTable(tbody, wfs, w => w.id, [
      { sig: w => w.name, cell: w => h("a", { href: `#/workflows/${w.id}`, class: "workflow-link" }, w.name) },
      { sig: w => w.app, cell: w => h("span", { class: "app-tag" }, w.app) },
      { class: "num", sig: w => w.node_count, cell: w => String(w.node_count) },
      { sig: w => w.cron + w.time_zone, cell: w => scheduleText(w) },
      { sig: w => w.next_fire_at || "", cell: w => w.next_fire_at ? relTime(w.next_fire_at) : "—" },
      { sig: w => w.state, cell: w => w.state === "scheduled" ? t("jobs.state.scheduled") : h("span", { class: "muted" }, t("jobs.state." + w.state)) },
      { sig: w => w.updated_at, cell: w => absTime(w.updated_at) },
    ]);
    table.hidden = !wfs.length;
    empty.hidden = !!wfs.length;
    count.textContent = t("workflows.count", { n: wfs.length });
  }

  async function refresh() {
    const res = await api("GET", "/workflows?limit=500");
    if (!ctx.isCurrent()) return;
    wfs = res.workflows.sort((a, b) => a.app.localeCompare(b.app) || a.name.localeCompare(b.name));
    render();
  }
  return { refresh, interval: () => 15000 };
}

export default function mount(root, ctx) {
  return ctx.params.id ? detail(root, ctx) : list(root, ctx);
}
