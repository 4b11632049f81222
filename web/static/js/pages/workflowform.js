// Create / edit a workflow (issue 22). Each node is a box of labelled
// fields that wrap with the width — a key, what the node runs (a job picked
// by name, or an inline handler with its params and slots), its start rule
// and the nodes it runs after (its parents in the graph; "waits for" is a
// job's or node's wait for other jobs' runs) — or, for everything the boxes
// do not show, the whole graph is edited as JSON. Every change is sent
// (debounced) to POST /workflows/validate: the graph is drawn as the admin
// lays it out, at its size (it scrolls), the next firings are listed, and
// each field error appears in its node's box.
import { api } from "../api.js";
import { t, fieldTexts } from "../i18n.js";
import { h, pageHead, card, toast, debounce, icon, button, fill } from "../dom.js";
import { dagSVG } from "./workflows.js";

const HEAD = ["app", "name", "description", "cron", "time_zone", "failure_policy"];
const START_RULES = ["all_success", "all_done", "one_success"];
// Node fields the editor edits; any other field of a node (one the console
// does not know yet) is kept as it was.
const TABLE_FIELDS = ["key", "job", "handler", "params", "slots", "start"];

function browserZone() {
  try { return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC"; } catch { return "UTC"; }
}

/** refText is how a node's job is written in the editor: app/name, or #id. */
function refText(job, app) {
  if (!job) return "";
  if (job.id) return "#" + job.id;
  return (job.app && job.app !== app ? job.app + "/" : "") + (job.name || "");
}

/** parseRef reads a job written as name, app/name or #id. */
function parseRef(text) {
  const s = text.trim();
  if (/^#?\d+$/.test(s)) return { id: Number(s.replace("#", "")) };
  const i = s.indexOf("/");
  return i > 0 ? { app: s.slice(0, i), name: s.slice(i + 1) } : { name: s };
}

export default function mount(root, ctx) {
  const id = ctx.params.id ? Number(ctx.params.id) : 0;
  let wf = null, seq = 0, jsonMode = false;
  const inputs = {}, errs = {};
  let rows = []; // { raw, el: { key, kind, ref, params, slots, start, after }, err, box }

  if (!ctx.can("operator")) {
    root.append(pageHead(id ? t("wfform.editTitle") : t("wfform.newTitle")), h("div", { class: "callout callout-warn", id: "form-forbidden" }, t("form.forbidden")));
    return { refresh: async () => {}, interval: () => 0 };
  }

  function field(name, label, el, help, opts = {}) {
    inputs[name] = el;
    const err = h("div", { class: "field-error", "data-error-for": name, role: "alert" });
    errs[name] = err;
    return h("div", { class: ["field", opts.wide && "span-2"], dataset: { field: name } },
      h("label", { class: "field-label", for: el.id }, label, opts.required ? h("span", { class: "req" }, " *") : null), el, err,
      help ? h("div", { class: "field-help" }, help) : null);
  }
  const text = (name, attrs = {}) => h("input", { id: "wf-" + name, name, autocomplete: "off", spellcheck: "false", ...attrs });
  const zoneList = h("datalist", { id: "wf-tz-list" }, (() => { try { return Intl.supportedValuesOf("timeZone"); } catch { return ["UTC"]; } })().map(z => h("option", { value: z })));
  const jobList = h("datalist", { id: "wf-job-list" });
  const enabled = h("input", { type: "checkbox", id: "wf-enabled" });
  const banner = h("div", { class: "callout callout-bad", id: "wf-form-error", hidden: true });
  const general = h("div", { class: "callout callout-bad", id: "wf-graph-error", hidden: true, role: "alert" });
  const list = h("div", { id: "wf-nodes", class: "wf-nodes" });
  const json = h("textarea", { id: "wf-json", class: "mono", rows: 18, spellcheck: "false", hidden: true });
  const jsonToggle = button(t("wfform.asJSON"), { size: "sm", id: "wf-json-toggle", onclick: () => toggleJSON() });
  const addBtn = button(t("wfform.addNode"), { size: "sm", icon: "plus", id: "wf-add-node", onclick: () => { addRow({}); rows[rows.length - 1].el.key.focus(); changed(); } });
  const saveBtn = h("button", { type: "submit", class: "btn btn-primary", id: "wf-save" }, icon(id ? "edit" : "plus"), h("span", {}, id ? t("form.save") : t("wfform.create")));
  const cancel = h("a", { href: id ? "#/workflows/" + id : "#/workflows", class: "btn btn-secondary", id: "wf-cancel" }, t("common.cancel"));
  const pvState = h("div", { class: "pv-state", id: "wf-pv-state", dataset: { state: "idle" } });
  const pvGraph = h("div", { class: "dag-wrap", id: "wf-pv-graph" });
  const pvNext = h("div", { id: "wf-pv-next" });

  const form = h("form", { id: "workflow-form", class: "job-form", novalidate: true }, banner,
    card(t("form.identity"), h("div", { class: "form-grid" },
      field("app", t("field.app"), text("app", { placeholder: "billing" }), null, { required: true }),
      field("name", t("field.name"), text("name", { placeholder: "eod-settlement" }), null, { required: true }),
      field("description", t("field.description"), h("textarea", { id: "wf-description", name: "description", rows: 2 }), null, { wide: true }))),
    card(t("form.schedule"), h("div", { class: "form-grid" },
      field("cron", t("field.cron"), text("cron", { class: "mono", placeholder: "0 18 * * MON-FRI" }), t("wfform.cronHelp"), { wide: true }),
      field("time_zone", t("field.time_zone"), text("time_zone", { list: "wf-tz-list", placeholder: "Europe/London" }), t("wfform.zoneHelp")),
      field("failure_policy", t("workflows.failurePolicy"), h("select", { id: "wf-failure_policy", name: "failure_policy" },
        ["stop", "continue"].map(p => h("option", { value: p }, t("workflows.policy." + p))))),
      h("div", { class: "field span-2" }, h("label", { class: "check" }, enabled, h("span", {}, t("field.enabled")))), zoneList)),
    card(t("wfform.nodes"), [general, list, json,
      h("div", { class: "toolbar" }, addBtn, h("div", { class: "spacer" }), jsonToggle), jobList], { sub: t("wfform.nodesSub") }),
    h("div", { class: "form-actions" }, cancel, saveBtn));
  root.append(pageHead(id ? t("wfform.editTitle") : t("wfform.newTitle"), id ? null : t("wfform.newSub")),
    h("div", { class: "form-layout" }, form, h("aside", { class: "form-aside" },
      card(t("wfform.preview"), [pvState, pvGraph, pvNext], { class: "preview-card", sub: t("wfform.previewSub") }))));

  /** addRow appends a node's box for node (a node of the API's shape). */
  function addRow(node, after = []) {
    const app = () => inputs.app.value.trim();
    const el = {
      key: h("input", { class: "mono wf-key", value: node.key || "", autocomplete: "off", spellcheck: "false" }),
      kind: h("select", { class: "wf-kind" }, h("option", { value: "job" }, t("col.job")), h("option", { value: "handler" }, t("col.handler"))),
      ref: h("input", { class: "mono wf-ref", autocomplete: "off", spellcheck: "false" }),
      params: h("input", { class: "mono wf-params", value: node.params || "", autocomplete: "off", spellcheck: "false", placeholder: '{"ledger":"main"}' }),
      slots: h("input", { class: "wf-slots", type: "number", min: 1, max: 1024, value: node.slots || "", placeholder: "1" }),
      start: h("select", { class: "wf-start" }, START_RULES.map(r => h("option", { value: r }, t("workflows.start." + r)))),
      after: h("input", { class: "mono wf-after", value: after.join(", "), autocomplete: "off", spellcheck: "false", placeholder: "load_trades, load_fx" }),
    };
    el.kind.value = node.handler ? "handler" : "job";
    el.ref.value = node.handler || refText(node.job, app());
    el.start.value = node.start || "all_success";
    const row = { raw: node, el, err: h("div", { class: "field-error wf-row-error", role: "alert" }) };
    const showKind = () => {
      const inline = el.kind.value === "handler";
      el.ref.setAttribute("list", inline ? "" : "wf-job-list");
      el.ref.placeholder = inline ? "settle.eod" : "load-trades · market-data/load-fx · #42";
      el.params.disabled = el.slots.disabled = !inline;
    };
    el.kind.addEventListener("change", showKind);
    showKind();
    const remove = button("", { size: "sm", icon: "trash", class: "wf-remove", title: t("wfform.removeNode"), onclick: () => {
      rows = rows.filter(r => r !== row);
      row.box.remove();
      changed();
    } });
    const labelled = (cls, label, input) => h("label", { class: ["field", "wf-f", cls] }, h("span", { class: "field-label" }, label), input);
    row.box = h("div", { class: "wf-node" },
      labelled("wf-f-key", t("wfform.key"), el.key), labelled("wf-f-kind", t("wfform.runs"), el.kind), labelled("wf-f-ref", t("wfform.what"), el.ref),
      labelled("wf-f-params", t("workflows.params"), el.params), labelled("wf-f-slots", t("col.slots"), el.slots),
      labelled("wf-f-start", t("workflows.startRule"), el.start),
      labelled("wf-f-after", t("workflows.parents"), el.after), h("div", { class: "wf-f wf-f-remove" }, remove), row.err);
    rows.push(row);
    list.append(row.box);
  }

  function setGraph(nodes, edges) {
    rows = [];
    fill(list);
    const parents = new Map();
    for (const e of edges || []) { if (!parents.has(e.to)) parents.set(e.to, []); parents.get(e.to).push(e.from); }
    for (const n of nodes || []) addRow(n, parents.get(n.key) || []);
  }

  /** graph is the nodes and edges of the boxes (or of the JSON). */
  function graph() {
    if (jsonMode) {
      try {
        const g = JSON.parse(json.value);
        return { nodes: g.nodes || [], edges: g.edges || [] };
      } catch (e) {
        return { error: t("wfform.badJSON", { error: e.message }) };
      }
    }
    const app = inputs.app.value.trim();
    const nodes = [], edges = [];
    for (const r of rows) {
      const n = { ...r.raw };
      for (const f of TABLE_FIELDS) delete n[f];
      n.key = r.el.key.value.trim();
      if (r.el.kind.value === "handler") {
        n.handler = r.el.ref.value.trim();
        if (r.el.params.value.trim()) n.params = r.el.params.value.trim();
        if (r.el.slots.value.trim()) n.slots = Number(r.el.slots.value);
      } else if (r.el.ref.value.trim()) {
        n.job = parseRef(r.el.ref.value);
        if (n.job.app === app) delete n.job.app;
      } else {
        n.job = { name: "" };
      }
      if (r.el.start.value !== "all_success") n.start = r.el.start.value;
      nodes.push(n);
      for (const p of r.el.after.value.split(/[\s,]+/).filter(Boolean)) edges.push({ from: p, to: n.key });
    }
    return { nodes, edges };
  }

  function spec() {
    const out = {};
    for (const k of HEAD) out[k] = inputs[k].value.trim();
    out.description = inputs.description.value;
    out.enabled = enabled.checked;
    if (id && wf) out.version = wf.version;
    const g = graph();
    if (g.error) return { error: g.error };
    return { body: { ...out, nodes: g.nodes, edges: g.edges } };
  }

  /** toggleJSON switches between the boxes and the whole graph as JSON; a
   * JSON that does not parse, or an edge to a key that is no node, keeps
   * the JSON open. */
  function toggleJSON() {
    if (!jsonMode) {
      json.value = JSON.stringify(graph(), null, 2);
    } else {
      const g = graph();
      if (g.error) { showErrors({}, g.error); return; }
      const keys = new Set(g.nodes.map(n => n.key));
      const lost = g.edges.find(e => !keys.has(e.to));
      if (lost) { showErrors({}, t("wfform.edgeNoNode", { from: lost.from, to: lost.to })); return; }
      setGraph(g.nodes, g.edges);
    }
    jsonMode = !jsonMode;
    json.hidden = !jsonMode;
    list.hidden = jsonMode;
    addBtn.hidden = jsonMode;
    fill(jsonToggle, h("span", {}, jsonMode ? t("wfform.asTable") : t("wfform.asJSON")));
    changed();
  }

  /** showErrors puts each field error next to its input or in its node's
   * box; the errors of the graph as a whole (a cycle, the node limit) above
   * them. */
  function showErrors(fields, whole) {
    for (const [k, el] of Object.entries(errs)) { el.textContent = fields[k] || ""; el.closest(".field").classList.toggle("has-error", !!fields[k]); }
    for (const r of rows) { r.err.textContent = ""; r.box.classList.remove("has-error"); }
    const body = spec().body;
    const other = whole ? [whole] : [];
    for (const [k, m] of Object.entries(fields)) {
      if (errs[k]) continue;
      let row = null;
      let mm = /^nodes\[(\d+)\]/.exec(k);
      if (mm && !jsonMode) row = rows[Number(mm[1])];
      mm = /^edges\[(\d+)\]/.exec(k);
      if (mm && !jsonMode && body) {
        const e = body.edges[Number(mm[1])];
        row = e && rows.find(r => r.el.key.value.trim() === e.to);
      }
      if (row) {
        row.err.textContent = (row.err.textContent ? row.err.textContent + " · " : "") + m;
        row.box.classList.add("has-error");
      } else {
        other.push(`${k}: ${m}`);
      }
    }
    general.hidden = !other.length;
    fill(general, other.map(x => h("div", {}, x)));
  }

  function setState(state, label) {
    pvState.dataset.state = state;
    fill(pvState, h("span", { class: "pv-dot" }), label);
  }

  async function validate() {
    const my = ++seq;
    const { body, error } = spec();
    if (error) { showErrors({}, error); setState("invalid", t("form.invalid")); return; }
    if (!body.app || !body.name || !body.nodes.length) {
      showErrors({});
      setState("idle", t("wfform.enterNodes"));
      return;
    }
    setState("checking", t("form.checking"));
    try {
      const res = await api("POST", "/workflows/validate", body);
      if (my !== seq) return;
      showErrors({});
      setState("valid", t("form.valid"));
      fill(pvGraph, dagSVG(res.layout, body.nodes, null, null));
      fill(pvNext, res.next.length ? h("table", { class: "table table-compact", id: "wf-pv-firings" }, h("tbody", {}, res.next.map(f =>
        h("tr", {}, h("td", { class: "mono" }, f.local), h("td", { class: "muted" }, t("wfform.forDate", { date: f.business_date })))))) :
        h("p", { class: "muted" }, t("workflows.manualOnly")));
    } catch (e) {
      if (my !== seq) return;
      showErrors(fieldTexts(e), e.status === 400 ? null : e.message);
      setState("invalid", t("form.invalid"));
    }
  }
  const changed = debounce(validate, 300);
  form.addEventListener("input", () => { banner.hidden = true; changed(); });
  form.addEventListener("change", () => changed());

  form.addEventListener("submit", async ev => {
    ev.preventDefault();
    changed.cancel();
    const { body, error } = spec();
    if (error) { showErrors({}, error); return; }
    saveBtn.disabled = true;
    banner.hidden = true;
    try {
      const w = id ? await api("PUT", `/workflows/${id}`, body) : await api("POST", "/workflows", body);
      toast(id ? t("form.saved", { name: w.name }) : t("form.created", { name: w.name }));
      ctx.navigate("#/workflows/" + w.id);
    } catch (e) {
      const fields = fieldTexts(e);
      showErrors(fields);
      fill(banner, h("strong", {}, e.status === 409 && !Object.keys(fields).length ? t("form.conflict") : t("form.saveFailed")), " ",
        Object.keys(fields).length ? t("common.checkFields") : e.message);
      banner.hidden = false;
      banner.scrollIntoView({ block: "center" });
    } finally { saveBtn.disabled = false; }
  });

  async function load() {
    const jobs = await api("GET", "/jobs?limit=500").catch(() => ({ jobs: [] }));
    fill(jobList, (jobs.jobs || []).map(j => h("option", { value: j.app + "/" + j.name })));
    if (id) {
      wf = await api("GET", `/workflows/${id}`);
      for (const k of HEAD) inputs[k].value = wf[k] || "";
      enabled.checked = wf.enabled !== false;
      inputs.app.readOnly = inputs.name.readOnly = true;
      root.querySelector(".page-title").append(h("div", { class: "page-sub" }, `${wf.app}/${wf.name} · v${wf.version}`));
      setGraph(wf.nodes, wf.edges || []);
    } else {
      inputs.time_zone.value = browserZone();
      inputs.failure_policy.value = "stop";
      enabled.checked = true;
      addRow({});
    }
    validate();
  }
  let loaded = false;
  return {
    refresh: async () => { if (!loaded) { loaded = true; await load(); } },
    interval: () => 0,
  };
}
