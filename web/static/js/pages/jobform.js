// Create / edit a job, with live validation: every change is sent
// (debounced) to POST /jobs/validate; field errors appear next to their
// fields and the next firings are previewed in the job's zone and in UTC,
// with the daylight-saving notes of the schedule package.
import { api } from "../api.js";
import { t, fmtDur, fmtInZone, fmtRel, fmtWeekday, warningTexts, noteText, fieldTexts, firingZone } from "../i18n.js";
import { h, pageHead, card, toast, debounce, icon, button, fill } from "../dom.js";

const drafts = new Map(); // "new" or job id → field values, kept across a language switch

const NUMERIC = ["max_runs", "max_running_slots", "slots", "misfire_threshold_ms", "max_catch_up", "timeout_ms", "retry_max", "retry_backoff_ms", "record_max_attempts", "retry_budget_percent", "breaker_threshold"];
const PRESETS = [
  ["*/30 * * * * *", "preset.30s"], ["* * * * *", "preset.minute"], ["H * * * *", "preset.hourlyH"],
  ["30 2 * * *", "preset.daily"], ["0 9 * * 1-5", "preset.weekdays"], ["@every 10m", "preset.every10m"],
];
const SCHEDULE_FIELDS = new Set(["cron", "time_zone", "time_zones", "calendar_id", "calendar_rule", "calendar_shift", "start_at", "end_at"]);
// Suggested dedup scopes of the records policy (sdk/records).
const SCOPES = [["run", "scope.run"], ["job", "scope.job"], ["settle:{date}", "scope.named"]];

// A job's waits (wait_for) in the form: one awaited run per line, "name"
// or "app/name" for a job (the job's app by default), "workflow name" or
// "workflow app/name" for a workflow: the labels the server's reasons use.
export function waitsText(list) {
  return (list || []).map(w => {
    const ref = w.workflow || w.job || {};
    return (w.workflow ? "workflow " : "") + (ref.app ? ref.app + "/" : "") + (ref.name || "");
  }).join("\n");
}
/** parseWaits reads waitsText's form; bad lines are listed (1-based). */
export function parseWaits(text) {
  const waits = [], bad = [];
  text.split("\n").forEach((raw, i) => {
    const line = raw.trim();
    if (!line) return;
    const m = /^(workflow\s+)?(?:([^\s/]+)\/)?([^\s/]+)$/.exec(line);
    if (!m) { bad.push(i + 1); return; }
    const ref = m[2] ? { app: m[2], name: m[3] } : { name: m[3] };
    waits.push(m[1] ? { workflow: ref } : { job: ref });
  });
  return { waits, bad };
}
/** foldWaits shows the server's errors of single waits (wait_for[1].name)
 * under the wait_for field, by line. */
function foldWaits(fields) {
  const out = {}, lines = [];
  for (const [k, m] of Object.entries(fields)) {
    const w = /^wait_for\[(\d+)\]/.exec(k);
    if (w) lines.push(t("form.err.waitAt", { line: Number(w[1]) + 1, error: m })); else out[k] = m;
  }
  if (lines.length) out.wait_for = [out.wait_for, ...lines].filter(Boolean).join("; ");
  return out;
}

function zones() {
  try { return Intl.supportedValuesOf("timeZone"); } catch { return ["UTC", "Europe/Berlin", "Asia/Shanghai", "America/New_York"]; }
}
function browserZone() {
  try { return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC"; } catch { return "UTC"; }
}

export default function mount(root, ctx) {
  const id = ctx.params.id ? Number(ctx.params.id) : 0;
  const key = id ? String(id) : "new";
  let job = null;
  let seq = 0;
  let submitted = false;
  const touched = new Set();
  const inputs = {};
  const errs = {};

  if (!ctx.can("operator")) {
    root.append(pageHead(id ? t("form.editTitle") : t("form.newTitle")), h("div", { class: "callout callout-warn", id: "form-forbidden" }, t("form.forbidden")));
    return { refresh: async () => {}, interval: () => 0 };
  }

  function input(name, attrs = {}) {
    const el = attrs.tag === "textarea" ? h("textarea", { id: "f-" + name, name, rows: attrs.rows || 3, spellcheck: "false", class: attrs.class })
      : attrs.tag === "select" ? h("select", { id: "f-" + name, name }, attrs.options.map(([v, l]) => h("option", { value: v }, l)))
        : h("input", { id: "f-" + name, name, type: attrs.type || "text", autocomplete: "off", spellcheck: "false", class: attrs.class, placeholder: attrs.placeholder, min: attrs.min, max: attrs.max, list: attrs.list, step: attrs.step });
    inputs[name] = el;
    return el;
  }
  function field(name, label, el, help, opts = {}) {
    const err = h("div", { class: "field-error", "data-error-for": name, id: "err-" + name, role: "alert" });
    errs[name] = err;
    return h("div", { class: ["field", opts.wide && "span-2"], dataset: { field: name } },
      h("label", { class: "field-label", for: el.id }, label, opts.required ? h("span", { class: "req" }, " *") : null),
      opts.suffix ? h("div", { class: "input-group" }, el, h("span", { class: "suffix" }, opts.suffix)) : el,
      err, help ? h("div", { class: "field-help" }, help) : null);
  }

  // More zones (time_zones): chips after the job's zone, added from an
  // input with the zone list (docs/schedules.md, "Several zones").
  let extraZones = [];
  const zoneAdd = h("input", { id: "f-time_zones", type: "text", autocomplete: "off", spellcheck: "false", list: "tz-list", placeholder: "Europe/London" });
  const zoneChips = h("div", { class: "chips", id: "zone-chips" });
  function renderZones() {
    fill(zoneChips, extraZones.map(z => h("button", { type: "button", class: "chip zone-chip", dataset: { zone: z }, title: t("form.removeZone", { zone: z }),
      onclick: () => { extraZones = extraZones.filter(x => x !== z); zonesChanged(); } }, z, " ×")));
  }
  function addZone() {
    const z = zoneAdd.value.trim();
    zoneAdd.value = "";
    if (z && !extraZones.includes(z)) extraZones.push(z);
    zonesChanged();
  }
  function zonesChanged() {
    touched.add("time_zones");
    renderZones();
    changed();
  }
  zoneAdd.addEventListener("keydown", ev => { if (ev.key === "Enter") { ev.preventDefault(); addZone(); } });
  const zonesField = h("div", { class: "input-group" }, zoneAdd, button(t("form.addZone"), { size: "sm", id: "zone-add", onclick: addZone }));

  const zoneList = h("datalist", { id: "tz-list" }, ["UTC", ...zones().filter(z => z !== "UTC")].map(z => h("option", { value: z })));
  const scopeList = h("datalist", { id: "scope-list" }, SCOPES.map(([v, k]) => h("option", { value: v }, t(k))));
  const enabled = h("input", { type: "checkbox", id: "f-enabled", name: "enabled" });
  const presets = h("div", { class: "chips" }, PRESETS.map(([expr, k]) => h("button", { type: "button", class: "chip", title: expr, onclick: () => {
    inputs.cron.value = expr; touched.add("cron"); changed(); inputs.cron.focus();
  } }, t(k))));

  // Choices from what executors report (typing stays possible for an
  // executor not online yet): apps, the handlers of the chosen app, and
  // child jobs picked by name.
  const appList = h("datalist", { id: "app-list" });
  const handlerList = h("datalist", { id: "handler-list" });
  const offers = new Map(); // app → Set of handlers ("" in it: the executor runs any handler)
  const jobsByRef = new Map(); // "app/name" → id
  const jobsByID = new Map(); // id → "app/name"
  const handlerWarn = h("div", { class: "callout callout-warn field-callout", id: "handler-warning", role: "status", hidden: true });
  const handlerField = field("handler", t("field.handler"), input("handler", { class: "mono", placeholder: "demo.hello", list: "handler-list" }), t("help.handler"), { required: true });
  handlerField.append(handlerWarn, appList, handlerList);
  const jobList = h("datalist", { id: "job-list" });
  const childPick = h("input", { id: "f-child-pick", list: "job-list", autocomplete: "off", spellcheck: "false", placeholder: t("form.childPick"), "aria-label": t("form.childPick") });
  const childNames = h("div", { class: "field-help", id: "child-names" });
  const childField = field("child_job_ids", t("field.child_job_ids"), input("child_job_ids", { placeholder: "12, 15" }), t("help.child_job_ids"));
  childField.append(childPick, jobList, childNames);
  childPick.addEventListener("change", () => {
    const ref = childPick.value.trim();
    const cid = jobsByRef.get(ref);
    if (!cid) return;
    const ids = inputs.child_job_ids.value.split(/[\s,]+/).filter(Boolean);
    if (!ids.includes(String(cid))) ids.push(String(cid));
    inputs.child_job_ids.value = ids.join(", ");
    childPick.value = "";
    touched.add("child_job_ids");
    showChildNames();
    changed();
  });

  function fillHandlers() {
    const hs = [...(offers.get(inputs.app.value.trim()) || [])].filter(Boolean).sort();
    fill(handlerList, hs.map(x => h("option", { value: x })));
  }
  function showChildNames() {
    const ids = inputs.child_job_ids.value.split(/[\s,]+/).filter(Boolean);
    fill(childNames, ids.map((x, i) => [i ? ", " : "", h("span", { class: jobsByID.has(Number(x)) ? "" : "text-bad" },
      x, " ", jobsByID.has(Number(x)) ? jobsByID.get(Number(x)) : t("form.noSuchJob"))]));
  }
  async function loadChoices() {
    const [ex, jobs, cals] = await Promise.all([api("GET", "/executors").catch(() => ({ executors: [] })), api("GET", "/jobs?limit=500").catch(() => ({ jobs: [] })),
      api("GET", "/calendars").catch(() => ({ calendars: [] }))]);
    calendars = cals.calendars || [];
    fillCalendars();
    for (const e of ex.executors || []) {
      if (e.state === "gone") continue;
      if (!offers.has(e.app)) offers.set(e.app, new Set());
      for (const x of (e.handlers || "").split(",")) offers.get(e.app).add(x.trim());
    }
    fill(appList, [...offers.keys()].sort().map(a => h("option", { value: a })));
    for (const j of jobs.jobs || []) {
      if (j.id === id) continue; // not its own child
      jobsByRef.set(j.app + "/" + j.name, j.id);
      jobsByID.set(j.id, j.app + "/" + j.name);
    }
    fill(jobList, [...jobsByRef.keys()].sort().map(r => h("option", { value: r })));
    fillHandlers();
    showChildNames();
  }

  const banner = h("div", { class: "callout callout-bad", id: "form-error", hidden: true });
  const draftNote = h("div", { class: "callout callout-info", id: "draft-note", hidden: true }, t("form.draftRestored"), " ",
    button(t("form.discardDraft"), { size: "sm", onclick: async () => {
      drafts.delete(key);
      touched.clear();
      submitted = false;
      draftNote.hidden = true;
      await load(true);
    } }));
  const saveBtn = h("button", { type: "submit", class: "btn btn-primary", id: "job-save" }, icon(id ? "edit" : "plus"), h("span", {}, id ? t("form.save") : t("form.create")));
  const cancelBtn = h("a", { href: id ? "#/jobs/" + id : "#/jobs", class: "btn btn-secondary", id: "job-cancel", onclick: () => drafts.delete(key) }, t("common.cancel"));

  const form = h("form", { id: "job-form", class: "job-form", novalidate: true },
    draftNote, banner,
    card(t("form.identity"), h("div", { class: "form-grid" },
      field("app", t("field.app"), input("app", { placeholder: t("form.example", { value: "billing" }), list: "app-list" }), t("help.app"), { required: true }),
      field("name", t("field.name"), input("name", { placeholder: t("form.example", { value: "nightly-settlement" }) }), t("help.name"), { required: true }),
      field("description", t("field.description"), input("description", { tag: "textarea", rows: 2 }), null, { wide: true }))),
    card(t("form.schedule"), h("div", { class: "form-grid" },
      field("cron", t("field.cron"), input("cron", { class: "mono", placeholder: "0 3 * * *" }), [t("help.cron"), presets], { required: true, wide: true }),
      field("time_zone", t("field.time_zone"), input("time_zone", { list: "tz-list", placeholder: "Europe/Berlin" }), t("help.time_zone")),
      field("time_zones", t("field.time_zones"), zonesField, [zoneChips, t("help.time_zones")]),
      field("misfire_policy", t("field.misfire_policy"), input("misfire_policy", { tag: "select", options: [["run_once", t("misfire.run_once")], ["skip", t("misfire.skip")], ["catch_up", t("misfire.catch_up")]] }), t("help.misfire_policy")),
      field("misfire_threshold_ms", t("field.misfire_threshold_ms"), input("misfire_threshold_ms", { type: "number", min: 1000, placeholder: "60000" }), null, { suffix: "ms" }),
      field("max_catch_up", t("field.max_catch_up"), input("max_catch_up", { type: "number", min: 1, max: 1000, placeholder: "10" }), t("help.max_catch_up")),
      field("overlap_policy", t("field.overlap_policy"), input("overlap_policy", { tag: "select", options: [["allow", t("overlap.allow")], ["skip", t("overlap.skip")], ["queue", t("overlap.queue")], ["replace", t("overlap.replace")]] }), t("help.overlap_policy")),
      field("calendar_id", t("field.calendar_id"), input("calendar_id", { tag: "select", options: [["0", t("calendar.none")]] }), t("help.calendar_id"), { wide: true }),
      field("calendar_rule", t("field.calendar_rule"), input("calendar_rule", { tag: "select", options: [["", "—"], ["business_days_only", t("calrule.business_days_only")], ["skip_holidays", t("calrule.skip_holidays")], ["shift", t("calrule.shift")]] }), t("help.calendar_rule")),
      field("calendar_shift", t("field.calendar_shift"), input("calendar_shift", { tag: "select", options: [["next", t("calshift.next")], ["previous", t("calshift.previous")]] })),
      field("start_at", t("field.start_at"), input("start_at", { class: "mono", placeholder: "2026-12-24T00:00:00+08:00" }), t("help.start_at")),
      field("end_at", t("field.end_at"), input("end_at", { class: "mono", placeholder: "2026-12-31T23:59:59+08:00" }), t("help.end_at")),
      field("max_runs", t("field.max_runs"), input("max_runs", { type: "number", min: 0, placeholder: "0" }), t("help.max_runs")),
      field("jitter_window", t("field.jitter_window"), input("jitter_window", { class: "mono", placeholder: "10m" }), t("help.jitter_window")),
      zoneList)),
    card(t("form.execution"), h("div", { class: "form-grid" },
      handlerField,
      field("slots", t("field.slots"), input("slots", { type: "number", min: 1, max: 1024, placeholder: "1" }), t("help.slots")),
      field("params", t("field.params"), input("params", { tag: "textarea", rows: 2, class: "mono" }), t("help.params"), { wide: true }),
      field("slot_params", t("field.slot_params"), input("slot_params", { class: "mono", placeholder: "0=Beijing,1=Shanghai" }), t("help.slot_params"), { wide: true }),
      field("priority", t("field.priority"), input("priority", { tag: "select", options: ["critical", "high", "normal", "low"].map(p => [p, t("priority." + p)]) }), t("help.priority")),
      field("max_running_slots", t("field.max_running_slots"), input("max_running_slots", { type: "number", min: 0, max: 1000000, placeholder: "0" }), t("help.max_running_slots")),
      field("timeout_ms", t("field.timeout_ms"), input("timeout_ms", { type: "number", min: 0, placeholder: "0" }), t("help.timeout_ms"), { suffix: "ms" }),
      field("retry_max", t("field.retry_max"), input("retry_max", { type: "number", min: 0, max: 100, placeholder: "0" }), t("help.retry_max")),
      field("retry_backoff_ms", t("field.retry_backoff_ms"), input("retry_backoff_ms", { type: "number", min: 1, placeholder: "1000" }), null, { suffix: "ms" }),
      field("retry_backoff_max", t("field.retry_backoff_max"), input("retry_backoff_max", { class: "mono", placeholder: "10m" }), t("help.retry_backoff_max")),
      field("retry_budget_percent", t("field.retry_budget_percent"), input("retry_budget_percent", { type: "number", min: 0, max: 1000, placeholder: "0" }), t("help.retry_budget_percent"), { suffix: "%" }),
      field("retry_budget_window", t("field.retry_budget_window"), input("retry_budget_window", { class: "mono", placeholder: "10m" }), t("help.retry_budget_window")),
      field("breaker_threshold", t("field.breaker_threshold"), input("breaker_threshold", { type: "number", min: 0, max: 1000, placeholder: "0" }), t("help.breaker_threshold")),
      field("breaker_cooldown", t("field.breaker_cooldown"), input("breaker_cooldown", { class: "mono", placeholder: "1m" }), t("help.breaker_cooldown")),
      field("start_deadline", t("field.start_deadline"), input("start_deadline", { class: "mono", placeholder: "15m" }), t("help.start_deadline")),
      field("finish_deadline", t("field.finish_deadline"), input("finish_deadline", { class: "mono", placeholder: "2h · 06:00" }), t("help.finish_deadline")),
      field("deadline_action", t("field.deadline_action"), input("deadline_action", { tag: "select", options: [["alarm", t("deadline.alarm")], ["cancel", t("deadline.cancel")]] }), t("help.deadline_action")),
      field("wait_for", t("field.wait_for"), input("wait_for", { tag: "textarea", rows: 2, class: "mono", placeholder: "load-trades\nworkflow market-data/fx-close" }), t("help.wait_for"), { wide: true }),
      field("wait_timeout", t("field.wait_timeout"), input("wait_timeout", { class: "mono", placeholder: "24h" }), t("help.wait_timeout")),
      field("on_timeout", t("field.on_timeout"), input("on_timeout", { tag: "select", options: [["fail", t("ontimeout.fail")], ["skip", t("ontimeout.skip")]] }), t("help.on_timeout")),
      childField,
      id ? null : h("div", { class: "field span-2" }, h("label", { class: "check" }, enabled, h("span", {}, t("field.enabled")))))),
    card(t("form.records"), h("div", { class: "form-grid", id: "records-group" },
      field("dedup_scope", t("field.dedup_scope"), input("dedup_scope", { class: "mono", list: "scope-list", placeholder: "run · job · settle:{date}" }), t("help.dedup_scope"), { wide: true }),
      field("uncertain_policy", t("field.uncertain_policy"), input("uncertain_policy", { tag: "select", options: [["", t("records.handlerDecides")], ["retry", t("uncertain.retry")], ["skip", t("uncertain.skip")]] }), t("help.uncertain_policy")),
      field("record_max_attempts", t("field.record_max_attempts"), input("record_max_attempts", { type: "number", min: 0, max: 100, placeholder: "0" }), t("help.record_max_attempts")),
      scopeList), { sub: t("form.recordsSub") }),
    h("div", { class: "form-actions" }, cancelBtn, saveBtn));

  // Preview panel.
  const pvState = h("div", { class: "pv-state", id: "pv-state", dataset: { state: "idle" } });
  const pvResolved = h("div", { class: "pv-resolved", id: "pv-resolved" });
  const pvBody = h("div", { class: "pv-body", id: "preview" });
  const preview = card(t("form.preview"), [pvState, pvResolved, pvBody], { class: "preview-card", sub: t("form.previewSub") });

  root.append(
    pageHead(id ? t("form.editTitle") : t("form.newTitle"), id ? null : t("form.newSub")),
    h("div", { class: "form-layout" }, form, h("aside", { class: "form-aside" }, preview)));

  function values() {
    const v = {};
    for (const [k, el] of Object.entries(inputs)) v[k] = el.value;
    v.enabled = enabled.checked;
    v.extra_zones = [...extraZones];
    return v;
  }
  function setValues(v) {
    for (const [k, el] of Object.entries(inputs)) if (v[k] !== undefined && v[k] !== null) el.value = String(v[k]);
    enabled.checked = v.enabled !== false;
    extraZones = v.extra_zones ? [...v.extra_zones] : (v.time_zones || []).slice(1);
    renderZones();
    wantCalendar = String(v.calendar_id || 0);
    fillCalendars();
    showWaits();
  }
  // The timeout settings matter only with waits.
  function showWaits() {
    const none = inputs.wait_for.value.trim() === "";
    inputs.wait_timeout.closest(".field").hidden = none;
    inputs.on_timeout.closest(".field").hidden = none;
  }

  // The calendar select offers what the job's app may use: the global
  // calendars and the app's (GET /calendars lists those the user sees).
  let calendars = [];
  let wantCalendar = "0";
  function fillCalendars() {
    const app = inputs.app.value.trim();
    const cur = inputs.calendar_id.value && inputs.calendar_id.value !== "0" ? inputs.calendar_id.value : wantCalendar;
    const usable = calendars.filter(c => !c.app || c.app === app);
    const opts = [h("option", { value: "0" }, t("calendar.none")),
      ...usable.map(c => h("option", { value: String(c.id) }, (c.app ? c.app + "/" : "") + c.name))];
    if (cur !== "0" && !usable.some(c => String(c.id) === cur) && !calendars.length) {
      opts.push(h("option", { value: cur }, "#" + cur)); // not loaded yet
    }
    fill(inputs.calendar_id, opts);
    inputs.calendar_id.value = usable.some(c => String(c.id) === cur) || !calendars.length ? cur : "0";
    if (!inputs.calendar_id.value) inputs.calendar_id.value = "0";
    showShift();
  }
  function showShift() {
    inputs.calendar_shift.closest(".field").hidden = inputs.calendar_rule.value !== "shift";
    inputs.calendar_rule.closest(".field").hidden = inputs.calendar_id.value === "0" && inputs.calendar_rule.value === "";
  }

  /** spec builds the API body; client-side errors are returned separately. */
  function spec() {
    const v = values();
    const out = {
      app: v.app.trim(), name: v.name.trim(), description: v.description, handler: v.handler.trim(), cron: v.cron.trim(),
      time_zone: v.time_zone.trim(), slot_params: v.slot_params, params: v.params,
      misfire_policy: v.misfire_policy, overlap_policy: v.overlap_policy, priority: v.priority || "normal",
      dedup_scope: v.dedup_scope.trim(), uncertain_policy: v.uncertain_policy,
      start_deadline: v.start_deadline.trim(), finish_deadline: v.finish_deadline.trim(), deadline_action: v.deadline_action,
      calendar_id: Number(v.calendar_id) || 0, calendar_rule: v.calendar_rule,
      calendar_shift: v.calendar_rule === "shift" ? v.calendar_shift : "",
      start_at: v.start_at.trim() || null, end_at: v.end_at.trim() || null, jitter_window: v.jitter_window.trim(),
    };
    if (extraZones.length) out.time_zones = [out.time_zone || "UTC", ...extraZones];
    const local = {};
    const w = parseWaits(v.wait_for);
    if (w.bad.length) local.wait_for = t("form.err.waitLines", { lines: w.bad.join(", ") });
    if (w.waits.length) { out.wait_for = w.waits; out.wait_timeout = v.wait_timeout.trim(); out.on_timeout = v.on_timeout; }
    for (const k of NUMERIC) {
      const raw = String(v[k]).trim();
      if (raw === "") { out[k] = 0; continue; }
      const n = Number(raw);
      if (!Number.isInteger(n)) { local[k] = t("form.err.integer"); out[k] = 0; } else out[k] = n;
    }
    const ids = v.child_job_ids.split(/[\s,]+/).filter(Boolean);
    out.child_job_ids = [];
    for (const s of ids) {
      const n = Number(s);
      if (!Number.isInteger(n) || n <= 0) local.child_job_ids = t("form.err.ids"); else out.child_job_ids.push(n);
    }
    if (id) { out.version = job ? job.version : 0; out.enabled = job ? job.enabled : true; } else out.enabled = v.enabled;
    return { body: out, local };
  }

  function showErrors(fields) {
    for (const [k, el] of Object.entries(errs)) {
      const msg = fields[k];
      const filled = inputs[k] ? inputs[k].value.trim() !== "" : k === "time_zones" && extraZones.length > 0;
      const show = msg && (submitted || touched.has(k) || SCHEDULE_FIELDS.has(k) && filled);
      el.textContent = show ? msg : "";
      el.closest(".field").classList.toggle("has-error", !!show);
    }
  }

  function renderPreview(res, note) {
    fill(pvResolved);
    if (res.resolved && res.resolved !== inputs.cron.value.trim()) {
      pvResolved.append(h("span", { class: "muted" }, t("form.resolved")), " ", h("code", {}, res.resolved));
    }
    const zone = inputs.time_zone.value.trim() || "UTC";
    const multi = extraZones.length > 0; // each firing in its own zone
    const next = res.next || [];
    let n = 0; // firings are numbered, removed ones are not
    if (!next.length) { fill(pvBody, h("div", { class: "empty-sub" }, t("form.noFirings"))); return; }
    fill(pvBody,
      note ? h("div", { class: "callout callout-info" }, note) : null,
      h("table", { class: "table table-compact pv-table", id: "preview-table" },
        h("thead", {}, h("tr", {}, h("th", { class: "num" }, "#"), h("th", {}, multi ? t("form.firingZone") : t("form.inZone", { zone }), h("span", { class: "th-sub" }, " / UTC")), h("th", { class: "num" }, ""))),
        h("tbody", {}, next.map(f => [
          h("tr", { class: [f.note ? "has-note" : "", f.skipped ? "pv-skipped" : ""], dataset: { skipped: f.skipped ? "1" : "" } },
            h("td", { class: "num muted" }, f.skipped ? "—" : String(++n)),
            h("td", {},
              h("div", { class: "pv-main mono" }, h("span", { class: "wd" }, fmtWeekday(f.at, f.zone || zone)), f.local || fmtInZone(f.at, f.zone || zone),
                f.skipped ? h("span", { class: "badge pv-skip-badge" }, t("form.skippedRow")) : null),
              multi ? firingZone(f) : null,
              h("div", { class: "pv-sub mono" }, "UTC ", fmtInZone(f.at, "UTC")),
              f.start_after ? h("div", { class: "pv-sub mono pv-start-after" }, t("form.startsAfter", { at: fmtInZone(f.start_after, f.zone || zone), offset: fmtDur(Date.parse(f.start_after) - Date.parse(f.at)) })) : null),
            h("td", { class: "num muted nowrap" }, fmtRel(f.at))),
          f.note ? h("tr", { class: "note-row" }, h("td", {}), h("td", { colspan: 2 },
            f.skipped || f.shifted_from ? h("span", { class: "cal-note" }, f.skipped ? "⊘ " : "↷ ", t("form.calendar"), ": ", noteText(f))
              : h("span", { class: "dst-note" }, "⚠ ", t("form.dst"), ": ", noteText(f)))) : null,
        ]))));
  }

  function setState(state, text) {
    pvState.dataset.state = state;
    fill(pvState, h("span", { class: "pv-dot" }), text);
  }

  async function validate() {
    const my = ++seq;
    const { body, local } = spec();
    if (touched.size) drafts.set(key, values());
    if (!body.cron) {
      showErrors(local);
      setState("idle", t("form.enterCron"));
      fill(pvResolved);
      fill(pvBody);
      return;
    }
    setState("checking", t("form.checking"));
    try {
      const res = await api("POST", "/jobs/validate", body);
      if (my !== seq) return;
      showErrors(local);
      setState(Object.keys(local).length ? "invalid" : "valid", Object.keys(local).length ? t("form.invalid") : t("form.valid"));
      renderPreview(res);
      showWarnings(warningTexts(res));
    } catch (e) {
      if (my !== seq) return;
      const fields = { ...foldWaits(fieldTexts(e)), ...local };
      showErrors(fields);
      showWarnings(null);
      if (e.status !== 400) { setState("invalid", e.message); return; }
      const scheduleBad = Object.keys(fields).some(k => SCHEDULE_FIELDS.has(k));
      if (scheduleBad) {
        setState("invalid", t("form.scheduleInvalid"));
        fill(pvResolved);
        fill(pvBody, h("div", { class: "callout callout-bad", id: "preview-error" }, fields.cron || fields.time_zone || fields.time_zones || fields.calendar_id || fields.calendar_rule || fields.calendar_shift || fields.start_at || fields.end_at));
        return;
      }
      // The schedule is fine but another field is not: preview the schedule
      // with placeholders for the fields in error (H depends on app/name).
      const alt = { ...body };
      const placeholders = { app: "preview", name: "preview", handler: "preview", slots: 1, slot_params: "", params: "", misfire_threshold_ms: 0, max_catch_up: 0, timeout_ms: 0, retry_max: 0, retry_backoff_ms: 0, retry_backoff_max: "", retry_budget_percent: 0, retry_budget_window: "", breaker_threshold: 0, breaker_cooldown: "", child_job_ids: [], misfire_policy: "", overlap_policy: "", description: "", dedup_scope: "", uncertain_policy: "", record_max_attempts: 0, start_deadline: "", finish_deadline: "", deadline_action: "", max_runs: 0, max_running_slots: 0, priority: "normal", jitter_window: "" };
      for (const k of Object.keys(fields)) if (k in placeholders) alt[k] = placeholders[k];
      if (fields.wait_for || fields.wait_timeout || fields.on_timeout) { delete alt.wait_for; delete alt.wait_timeout; delete alt.on_timeout; }
      try {
        const res = await api("POST", "/jobs/validate", alt);
        if (my !== seq) return;
        setState("partial", t("form.otherInvalid"));
        renderPreview(res, /\bH\b/.test(body.cron) && (fields.app || fields.name) ? t("form.hNote") : null);
      } catch {
        if (my !== seq) return;
        setState("invalid", t("form.invalid"));
      }
    }
  }
  /** showWarnings shows what the job would meet though valid (no executor
   * offers its handler), under the handler field. */
  function showWarnings(ws) {
    handlerWarn.hidden = !(ws && ws.length);
    fill(handlerWarn, (ws || []).join(" "));
  }
  const changed = debounce(validate, 300);

  form.addEventListener("input", ev => {
    if (ev.target === inputs.app) { fillHandlers(); fillCalendars(); }
    if (ev.target === inputs.child_job_ids) showChildNames();
    if (ev.target === inputs.wait_for) showWaits();
    if (ev.target.name) touched.add(ev.target.name);
    banner.hidden = true;
    changed();
  });
  form.addEventListener("change", ev => {
    if (ev.target === inputs.calendar_id && inputs.calendar_id.value !== "0" && !inputs.calendar_rule.value) {
      inputs.calendar_rule.value = "business_days_only"; // a calendar needs a rule: the common one
    }
    if (ev.target === inputs.calendar_id || ev.target === inputs.calendar_rule) { touched.add("calendar_rule"); showShift(); }
    if (ev.target.name) touched.add(ev.target.name);
    changed();
  });

  form.addEventListener("submit", async ev => {
    ev.preventDefault();
    submitted = true;
    changed.cancel();
    const { body, local } = spec();
    if (Object.keys(local).length) { showErrors(local); focusFirstError(); return; }
    saveBtn.disabled = true;
    banner.hidden = true;
    try {
      const j = id ? await api("PUT", `/jobs/${id}`, body) : await api("POST", "/jobs", body);
      drafts.delete(key);
      toast(id ? t("form.saved", { name: j.name }) : t("form.created", { name: j.name }));
      for (const w of warningTexts(j)) toast(w, "warn"); // saved, but its runs would wait
      ctx.navigate("#/jobs/" + j.id);
    } catch (e) {
      // Fields in error show what is wrong next to their inputs, in the
      // reader's language; the banner names those without an input (the
      // server's one-line summary, e.message, is English).
      const fields = foldWaits(fieldTexts(e));
      const named = Object.keys(fields).length > 0;
      const elsewhere = Object.entries(fields).filter(([k]) => !errs[k]).map(([k, m]) => `${k}: ${m}`);
      showErrors(fields);
      fill(banner, h("strong", {}, e.status === 409 && !named ? t("form.conflict") : t("form.saveFailed")),
        " ", named ? elsewhere.join("; ") : e.message);
      if (e.status === 409 && id && !named) {
        banner.append(" ", button(t("form.reload"), { size: "sm", onclick: async () => { drafts.delete(key); job = null; await load(true); banner.hidden = true; } }));
      }
      banner.hidden = false;
      focusFirstError();
    } finally { saveBtn.disabled = false; }
  });

  function focusFirstError() {
    const f = form.querySelector(".field.has-error input, .field.has-error textarea, .field.has-error select");
    if (f) { f.focus(); f.scrollIntoView({ block: "center" }); } else banner.scrollIntoView({ block: "center" });
  }

  async function load(force) {
    if (id) {
      job = await api("GET", `/jobs/${id}`);
      const d = !force && drafts.get(key);
      setValues(d || { ...job, child_job_ids: (job.child_job_ids || []).join(", "), wait_for: waitsText(job.wait_for), on_timeout: job.on_timeout || "fail" });
      if (d) for (const k of Object.keys(inputs)) touched.add(k);
      draftNote.hidden = !d;
      inputs.app.readOnly = true;
      inputs.name.readOnly = true;
      root.querySelector(".page-sub")?.remove();
      root.querySelector(".page-title").append(h("div", { class: "page-sub" }, `${job.app}/${job.name} · v${job.version}`));
    } else {
      const d = !force && drafts.get(key);
      draftNote.hidden = !d;
      setValues(d || { time_zone: browserZone(), slots: 1, misfire_policy: "run_once", overlap_policy: "allow", enabled: true, app: "", name: "", description: "", handler: "", cron: "", params: "", slot_params: "", misfire_threshold_ms: "", max_catch_up: "", timeout_ms: "", retry_max: "", retry_backoff_ms: "", retry_backoff_max: "", retry_budget_percent: "", retry_budget_window: "", breaker_threshold: "", breaker_cooldown: "", dedup_scope: "", uncertain_policy: "", record_max_attempts: "", start_deadline: "", finish_deadline: "", deadline_action: "alarm", calendar_id: "0", calendar_rule: "", calendar_shift: "next", start_at: "", end_at: "", max_runs: "", max_running_slots: "", priority: "normal", jitter_window: "", child_job_ids: "", wait_for: "", wait_timeout: "", on_timeout: "fail" });
      if (d) for (const k of Object.keys(inputs)) if (d[k]) touched.add(k);
    }
    fillHandlers();
    showChildNames();
    await validate();
  }

  let loaded = false;
  return {
    refresh: async () => { if (!loaded) { loaded = true; await Promise.all([load(), loadChoices()]); } },
    interval: () => 0,
  };
}
