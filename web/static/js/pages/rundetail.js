// One run: status, progress, timeline, the grid of all its slots coloured
// by status or by duration, per-slot details on hover and click, the
// executors that ran it, failed slots, cancel and retry.
import { api } from "../api.js";
import { t, tOr, fmtDur, fmtDateTime, fmtNum, fmtTime, fmtInZone, status as stLabel, errText } from "../i18n.js";
import { h, s, card, badge, pill, kv, toast, confirmDialog, icon, showTip, hideTip, hideTipWithin, absTime, emptyState, busy, fill } from "../dom.js";
import { logsPanel } from "./runlogs.js";

const ACTIVE = new Set(["pending", "running"]);
// Slot states (docs/console.md): placed on an executor and not finished; and
// not started yet (waiting for an executor, being sent, or queued there).
const ACTIVE_SLOT = new Set(["assigned", "queued", "running"]);
const WAITING_SLOT = new Set(["pending", "assigned", "queued"]);
// The duration heat's steps: classes heat-0 … heat-4, whose fill and text
// colours are the theme's (--heat-N, --heat-N-text in console.css).
const HEAT_STEPS = 5;
let savedMode = "status";

// heatStep is the step of x, the duration's place between the shortest (0)
// and the longest (1).
function heatStep(x) {
  return Math.min(HEAT_STEPS - 1, Math.floor(Math.max(0, Math.min(1, x)) * HEAT_STEPS));
}

function dur(a, now) {
  if (!a || !a.started_at) return null;
  // Start and finish can come from different clocks (executor, database):
  // never show a negative duration.
  return Math.max(0, (a.finished_at ? Date.parse(a.finished_at) : now) - Date.parse(a.started_at));
}

/**
 * classPill shows how an attempt that did not succeed ended (its
 * error_class, docs/failures.md): permanent in red (no retry), timeout and
 * lost in amber, retryable and cancelled neutral; nothing for none.
 */
export function classPill(a) {
  if (!a || !a.error_class) return "";
  const kind = { permanent: "bad", timeout: "warn", lost: "warn" }[a.error_class];
  return h("span", { class: ["pill", kind && "pill-" + kind, "error-class"], "data-class": a.error_class, title: t("errclass.tip." + a.error_class) },
    t("errclass." + a.error_class));
}

export default function mount(root, ctx) {
  const id = Number(ctx.params.id);
  let data = null;
  let execs = new Map();
  let execsAt = 0;
  let mode = savedMode;
  let selected = null;
  let cells = [];
  let bySlot = new Map(); // slot → attempts (newest first)
  let current = new Map(); // slot → current attempt

  const statusEl = h("span", { id: "run-status" });
  const title = h("h1", {}, t("run.title", { id }), " ", statusEl);
  const sub = h("div", { class: "page-sub" });
  const actions = h("div", { class: "page-actions", id: "run-actions" });
  const progressBox = h("div", { id: "run-progress" });
  const recordsBox = h("div", { id: "run-records" });
  const timingBox = h("div", { id: "run-timing" });
  const timeline = h("div", { class: "timeline-box", id: "run-timeline" });
  const grid = h("div", { class: "slot-grid", id: "slot-grid", role: "grid", tabindex: "0", "aria-label": t("run.slots") });
  const gridLegend = h("div", { class: "legend", id: "grid-legend" });
  const modeSeg = h("div", { class: "segmented", id: "grid-mode" }, ["status", "duration"].map(m =>
    h("button", { type: "button", class: m === mode && "active", dataset: { mode: m }, onclick: () => {
      mode = savedMode = m;
      modeSeg.querySelectorAll("button").forEach(b => b.classList.toggle("active", b.dataset.mode === m));
      paintGrid();
    } }, t("run.mode." + m))));
  const slotPanel = h("div", { class: "slot-panel", id: "slot-panel" });
  const execBody = h("tbody");
  const failBox = h("div", { id: "run-failures" });
  const errorBanner = h("div", { class: "callout callout-bad", id: "run-error", hidden: true });
  // The run's result (docs/workflows.md, Results): read-only JSON, shown
  // only when a succeeded slot returned one.
  const resultPre = h("pre", { class: "json-pre", id: "run-result" });
  const resultCard = card(t("run.result"), resultPre, { id: "run-result-card", sub: t("run.resultSub") });
  resultCard.hidden = true;
  const logs = logsPanel(id);

  root.append(
    h("div", { class: "breadcrumbs" }, h("a", { href: "#/runs" }, t("nav.runs")), h("span", {}, "/"), h("span", {}, "#" + id)),
    h("div", { class: "page-head" }, h("div", { class: "page-title" }, title, sub), actions),
    errorBanner,
    resultCard,
    h("div", { class: "grid grid-3" },
      card(t("run.progress"), progressBox),
      card(t("run.records"), recordsBox),
      card(t("run.timing"), timingBox)),
    card(t("run.timeline"), timeline, { sub: t("run.timelineSub") }),
    h("div", { class: "grid grid-slots" },
      card(t("run.slots"), [h("div", { class: "grid-toolbar" }, gridLegend, h("div", { class: "spacer" }), modeSeg), grid], { id: "slots-card", sub: t("run.slotsSub") }),
      card(t("run.slotDetail"), slotPanel, { class: "slot-side" })),
    h("div", { class: "grid grid-detail" },
      card(t("run.executors"), h("div", { class: "table-wrap" }, h("table", { class: "table table-compact", id: "run-executors" },
        h("thead", {}, h("tr", {}, h("th", {}, t("col.executor")), h("th", { class: "num" }, t("col.slots")), h("th", { class: "num" }, t("status.succeeded")),
          h("th", { class: "num" }, t("status.failed")), h("th", { class: "num" }, t("run.active")), h("th", { class: "num" }, t("run.processed")), h("th", { class: "num" }, t("run.busy")))),
        execBody)), { flush: true }),
      card(t("run.failedSlots"), failBox, { flush: true })),
    card(t("logs.title"), logs.el, { id: "logs-card", sub: t("logs.sub") }));

  fill(slotPanel, emptyState(t("run.pickSlot"), t("run.pickSlotSub")));

  // Slot grid interaction: one listener for all cells.
  grid.addEventListener("mouseover", ev => {
    const c = ev.target.closest(".cell");
    if (!c) return;
    const slot = Number(c.dataset.slot);
    showTip(c, slotTip(slot), ev.clientX, ev.clientY);
  });
  grid.addEventListener("mousemove", ev => {
    const c = ev.target.closest(".cell");
    if (c) showTip(c, slotTip(Number(c.dataset.slot)), ev.clientX, ev.clientY);
  });
  grid.addEventListener("mouseleave", () => hideTip());
  grid.addEventListener("click", ev => {
    const c = ev.target.closest(".cell");
    if (!c) return;
    select(Number(c.dataset.slot));
  });
  grid.addEventListener("keydown", ev => {
    if (selected === null) return;
    const cols = Math.max(1, Math.round(grid.clientWidth / (cells[0]?.offsetWidth || 20)));
    const step = { ArrowRight: 1, ArrowLeft: -1, ArrowDown: cols, ArrowUp: -cols }[ev.key];
    if (!step) return;
    ev.preventDefault();
    const n = Math.max(0, Math.min(cells.length - 1, selected + step));
    select(n);
    cells[n].focus();
  });

  function select(slot) {
    selected = slot;
    cells.forEach((c, i) => c.classList.toggle("selected", i === slot));
    renderSlotPanel();
  }

  // Executors by name: from the executors list, else from the attempts
  // (their executor's instance id comes with them), else "executor N".
  const execNames = new Map();
  function execLabel(eid) {
    if (eid == null) return "—";
    const e = execs.get(eid);
    return e ? `${e.instance_id}` : execNames.get(eid) || t("run.executorN", { id: eid });
  }

  function slotTip(slot) {
    const a = current.get(slot);
    const now = Date.now();
    const rows = [h("div", { class: "tip-title" }, t("run.slotN", { n: slot }), " ", badge(a ? a.status : "pending", "badge-sm"))];
    if (a) {
      rows.push(
        h("div", { class: "tip-row" }, t("col.executor"), h("b", {}, execLabel(a.executor_id))),
        h("div", { class: "tip-row" }, t("run.attempt"), h("b", {}, `${a.attempt} · token ${a.token}`)),
        h("div", { class: "tip-row" }, t("col.duration"), h("b", {}, fmtDur(dur(a, now)))),
        h("div", { class: "tip-row" }, t("run.recordsShort"), h("b", {}, `${fmtNum(a.processed)} / ${fmtNum(a.skipped)} / ${fmtNum(a.failed)} / ${fmtNum(a.uncertain)}`)));
      if (a.error) { const e = errText(a); rows.push(h("div", { class: "tip-error" }, e.length > 300 ? e.slice(0, 300) + "…" : e)); }
    } else rows.push(h("div", { class: "tip-row muted" }, t("run.notAssigned")));
    return h("div", { class: "tip-body" }, rows);
  }

  /** medianDuration is the median duration of the run's finished current
   * attempts: what a slot is compared with to spot stragglers. */
  function medianDuration() {
    const ds = [...current.values()].filter(a => a.started_at && a.finished_at).map(a => dur(a, 0)).sort((x, y) => x - y);
    return ds.length >= 3 ? ds[Math.floor(ds.length / 2)] : null;
  }

  // The slot panel: what the tooltip does not say (when it ran, how it
  // compares with the other slots, its earlier attempts) and a way to its
  // log lines; the records in one row.
  function renderSlotPanel() {
    if (selected === null || !data) return;
    const list = bySlot.get(selected) || [];
    const now = Date.now();
    const a = current.get(selected);
    const slot = selected;
    let vsMedian = null;
    const med = medianDuration();
    if (a && a.started_at && a.finished_at && med) {
      const ratio = dur(a, now) / med;
      vsMedian = h("span", { class: ["muted", ratio >= 2 ? "text-warn" : ""], id: "slot-vs-median" }, " ", t("run.vsMedian", { x: ratio.toFixed(1), median: fmtDur(med) }));
    }
    const logsBtn = h("button", { class: "btn btn-sm", type: "button", id: "slot-logs" }, t("run.slotLogs"));
    logsBtn.addEventListener("click", () => logs.showSlot(slot));
    fill(slotPanel,
      h("div", { class: "slot-head" }, h("h4", {}, t("run.slotN", { n: slot })), badge(a ? a.status : "pending")),
      a ? kv([
        [t("col.executor"), a.executor_id != null ? h("span", { title: execs.get(a.executor_id)?.address || "" }, execLabel(a.executor_id)) : "—"],
        [t("run.attempt"), `${a.attempt} (token ${a.token})`],
        [t("run.ran"), a.started_at ? h("span", { title: fmtDateTime(a.started_at) + (a.finished_at ? " → " + fmtDateTime(a.finished_at) : "") },
          fmtTime(a.started_at, true), " → ", a.finished_at ? fmtTime(a.finished_at, true) : "…") : "—"],
        [t("col.duration"), h("span", {}, fmtDur(dur(a, now)), vsMedian)],
        ...(a.error_class ? [[t("col.errorClass"), classPill(a)]] : []),
        [t("run.recordsShort"), h("span", { class: "mono", title: t("run.recordsLong") }, `${fmtNum(a.processed)} / ${fmtNum(a.skipped)} / ${fmtNum(a.failed)} / ${fmtNum(a.uncertain)}`)],
      ], "kv-compact") : h("p", { class: "muted" }, t("run.notAssigned")),
      a && a.error ? h("pre", { class: "error-pre", id: "slot-error" }, errText(a)) : null,
      a ? h("div", { class: "btn-row" }, logsBtn) : null,
      a ? xxlTools(a) : null,
      list.length > 1 ? h("div", {}, h("h5", {}, t("run.history")),
        h("table", { class: "table table-compact" }, h("thead", {}, h("tr", {}, h("th", {}, t("run.attempt")), h("th", {}, t("col.executor")), h("th", {}, t("col.status")), h("th", {}, t("col.errorClass")), h("th", { class: "num" }, t("col.duration")))),
          h("tbody", {}, list.map(x => h("tr", { title: errText(x) }, h("td", { class: "mono" }, `${x.attempt}`), h("td", {}, execLabel(x.executor_id)),
            h("td", {}, badge(x.status, "badge-sm")), h("td", {}, classPill(x)), h("td", { class: "num" }, fmtDur(dur(x, now)))))))) : null);
  }

  // An attempt on an unchanged XXL-JOB executor: its log lives on the
  // executor (fetched through the admin) and it can be killed there.
  function xxlTools(a) {
    if (a.executor_id == null || execs.get(a.executor_id)?.protocol !== "xxljob") return null;
    const out = h("pre", { class: "log-pre", id: "xxl-log", hidden: true });
    const logBtn = h("button", { class: "btn btn-sm", type: "button", id: "xxl-log-btn" }, t("run.xxlLog"));
    logBtn.addEventListener("click", async () => {
      try {
        const r = await api("GET", `/xxljob/attempts/${a.token}/log`);
        out.hidden = false;
        out.textContent = r.content || t("run.xxlLogEmpty");
      } catch (e) { toast(e.message, "error"); }
    });
    const tools = [logBtn];
    if (ctx.can("operator") && ACTIVE_SLOT.has(a.status)) {
      const kill = h("button", { class: "btn btn-sm btn-danger", type: "button", id: "xxl-kill-btn" }, t("run.xxlKill"));
      kill.addEventListener("click", async () => {
        const ok = await confirmDialog({
          id: "xxl-kill-dialog", title: t("run.xxlKill"), danger: true, confirmLabel: t("run.xxlKill"),
          message: t("run.xxlKillConfirm", { n: a.slot }),
          onConfirm: () => api("POST", `/xxljob/attempts/${a.token}/kill`),
        });
        if (ok) { toast(t("run.xxlKilled")); ctx.refreshNow(); }
      });
      tools.push(kill);
    }
    return h("div", { class: "xxl-tools" }, h("h5", {}, t("run.xxlExecutor")), h("div", { class: "btn-row" }, ...tools), out);
  }

  function buildGrid(n) {
    grid.classList.remove("grid-lg", "grid-md", "grid-sm");
    grid.classList.add(n <= 64 ? "grid-lg" : n <= 256 ? "grid-md" : "grid-sm");
    cells = Array.from({ length: n }, (_, i) => h("div", { class: "cell", role: "gridcell", tabindex: "-1", dataset: { slot: i } }, n <= 64 ? String(i) : null));
    fill(grid, ...cells);
  }

  function paintGrid() {
    if (!data) return;
    const now = Date.now();
    let max = 0, min = Infinity;
    for (const a of current.values()) { const d = dur(a, now); if (d != null) { max = Math.max(max, d); min = Math.min(min, d); } }
    const span = Math.max(1, max - (min === Infinity ? 0 : min));
    cells.forEach((c, i) => {
      const a = current.get(i);
      const st = a ? a.status : "pending";
      const d = dur(a, now);
      const step = mode === "duration" && d != null ? " heat-" + heatStep((d - (min === Infinity ? 0 : min)) / span) : "";
      const cls = "cell s-" + st + (i === selected ? " selected" : "") + (mode === "duration" ? " heat" + step : "");
      if (c.className !== cls) c.className = cls;
      c.dataset.status = st;
    });
    if (mode === "status") {
      const counts = {};
      for (let i = 0; i < cells.length; i++) { const st = current.get(i)?.status || "pending"; counts[st] = (counts[st] || 0) + 1; }
      fill(gridLegend, ...["succeeded", "running", "queued", "assigned", "pending", "failed", "cancelled", "lost", "moved"].filter(k => counts[k])
        .map(k => h("span", { class: "legend-item" }, h("span", { class: ["swatch", "s-" + k] }), stLabel(k), h("b", {}, fmtNum(counts[k])))));
    } else {
      // One swatch per step, in the step's colours, saying the longest
      // duration it stands for.
      const lo = min === Infinity ? 0 : min, width = (max - lo) / HEAT_STEPS;
      const steps = h("span", { class: "heat-steps", id: "heat-steps" }, Array.from({ length: HEAT_STEPS }, (_, k) =>
        h("span", { class: "heat-step heat-" + k, title: t("run.heatStepTip", { from: fmtDur(lo + width * k), to: fmtDur(lo + width * (k + 1)) }) },
          fmtDur(lo + width * (k + 1)))));
      fill(gridLegend, h("span", { class: "legend-item" }, fmtDur(lo)), steps);
    }
  }

  function renderHeader(r) {
    fill(statusEl, badge(r.status, "badge-lg"));
    statusEl.dataset.status = r.status;
    // A deleted job's run keeps its name: shown, marked, without a link.
    const jobRef = r.job_deleted
      ? h("span", { id: "run-job", title: t("run.jobDeletedTip", { name: `${r.app}/${r.job_name}` }) }, `${r.app}/${r.job_name}`, " ", pill(t("runs.jobDeleted"), "muted"))
      : h("a", { href: "#/jobs/" + r.job_id, class: "link", id: "run-job" }, `${r.app}/${r.job_name}`);
    fill(sub, jobRef, " · ", tOr("trigger." + r.trigger, r.trigger),
      " · ", t("run.epoch", { epoch: r.epoch }), r.parent_run_id ? [" · ", h("a", { href: "#/runs/" + r.parent_run_id, class: "link" }, t("run.parent", { id: r.parent_run_id }))] : null);
    const btns = [];
    if (ctx.can("operator")) {
      if (ACTIVE.has(r.status)) {
        btns.push(h("button", { type: "button", class: "btn btn-danger-ghost", id: "run-cancel", onclick: () => cancelRun() }, icon("stop"), h("span", {}, t("run.cancel"))));
      } else {
        const retryable = [...current.values()].filter(a => a.status === "failed" || a.status === "cancelled").length;
        if (retryable) btns.push(h("button", { type: "button", class: "btn btn-primary", id: "run-retry", onclick: ev => retry(ev.currentTarget) }, icon("retry"), h("span", {}, t("run.retry", { n: retryable }))));
      }
    }
    btns.push(r.job_deleted
      ? h("button", { type: "button", class: "btn btn-secondary", id: "run-open-job", disabled: true, title: t("run.jobDeletedTip", { name: `${r.app}/${r.job_name}` }) }, t("run.jobDeleted"))
      : h("a", { class: "btn btn-secondary", id: "run-open-job", href: "#/jobs/" + r.job_id }, t("run.openJob")));
    const sig = btns.map(b => b.id + b.textContent).join("|");
    if (actions.dataset.sig !== sig) { fill(actions, ...btns); actions.dataset.sig = sig; }
    // A pending run's error is why it waits ("waiting: no online executor
    // of app … has handler …"): a warning, not a failure.
    errorBanner.hidden = !r.error;
    const waiting = r.status === "pending" && !!r.error;
    // A skipped run's error is why it did not run (misfire, overlap, a
    // holiday of its calendar): information, not a failure.
    errorBanner.className = waiting ? "callout callout-warn" : r.status === "skipped" ? "callout callout-info" : "callout callout-bad";
    errorBanner.textContent = errText(r);
  }

  function renderResult(result) {
    resultCard.hidden = result === undefined;
    const text = result === undefined ? "" : JSON.stringify(result, null, 2);
    if (resultPre.textContent !== text) resultPre.textContent = text;
  }

  function renderSummary(r) {
    const now = Date.now();
    const counts = { succeeded: 0, failed: 0, running: 0, waiting: 0, other: 0 };
    const rec = { processed: 0, skipped: 0, failed: 0, uncertain: 0 };
    for (const a of current.values()) {
      const k = WAITING_SLOT.has(a.status) ? "waiting" : a.status;
      if (k in counts) counts[k]++; else counts.other++;
      rec.processed += a.processed; rec.skipped += a.skipped; rec.failed += a.failed; rec.uncertain += a.uncertain;
    }
    const total = Math.max(1, r.slots);
    const done = counts.succeeded + counts.failed + counts.other;
    const waiting = Math.max(0, r.slots - current.size);
    const bar = h("div", { class: "progress", id: "run-progress-bar" });
    for (const [k, cls] of [["succeeded", "p-ok"], ["failed", "p-fail"], ["other", "p-other"], ["running", "p-run"], ["waiting", "p-assigned"]]) {
      if (!counts[k]) continue;
      const seg = h("span", { class: cls });
      seg.style.setProperty("width", (100 * counts[k] / total).toFixed(3) + "%");
      bar.append(seg);
    }
    fill(progressBox, 
      h("div", { class: "big-num" }, `${Math.floor(100 * done / total)}%`, h("span", { class: "big-sub" }, t("run.slotsDone", { done: fmtNum(done), total: fmtNum(r.slots) }))),
      bar,
      h("div", { class: "progress-legend" },
        h("span", {}, h("i", { class: "swatch p-ok" }), t("status.succeeded"), " ", h("b", {}, fmtNum(counts.succeeded))),
        h("span", {}, h("i", { class: "swatch p-fail" }), t("status.failed"), " ", h("b", {}, fmtNum(counts.failed))),
        h("span", {}, h("i", { class: "swatch p-run" }), t("status.running"), " ", h("b", {}, fmtNum(counts.running))),
        h("span", {}, h("i", { class: "swatch p-assigned", title: t("run.notStartedTip") }), t("run.notStarted"), " ", h("b", {}, fmtNum(counts.waiting + waiting)))));
    fill(recordsBox, h("div", { class: "records" },
      [["processed", t("run.processed"), ""], ["skipped", t("run.skipped"), ""], ["failed", t("run.failedRecords"), rec.failed ? "text-bad" : ""], ["uncertain", t("run.uncertain"), rec.uncertain ? "text-warn" : ""]]
        .map(([k, label, cls]) => h("div", { class: "record", id: "rec-" + k }, h("div", { class: ["record-num", cls] }, fmtNum(rec[k])), h("div", { class: "record-label" }, label)))));
    const started = r.started_at ? Date.parse(r.started_at) : null;
    const finished = r.finished_at ? Date.parse(r.finished_at) : null;
    fill(timingBox, kv([
      [t("run.scheduled"), absTime(r.scheduled_at)],
      r.time_zone ? [t("run.zone"), h("span", { id: "run-zone" }, h("span", { class: "mono" }, fmtInZone(r.scheduled_at, r.time_zone)), " ", h("span", { class: "muted" }, r.time_zone))] : null,
      r.shifted_from ? [t("run.shiftedFrom"), h("span", { id: "run-shifted-from" }, absTime(r.shifted_from))] : null,
      r.start_after ? [t("run.startAfter"), h("span", { id: "run-start-after", title: t("run.startAfterTip") }, absTime(r.start_after),
        h("span", { class: "muted" }, " (", t("run.jitterOffset", { offset: fmtDur(Date.parse(r.start_after) - Date.parse(r.scheduled_at)) }), ")"))] : null,
      r.calendar_id ? [t("run.calendar"), h("span", { id: "run-calendar" }, h("a", { class: "mono", href: `#/calendars/${r.calendar_id}` }, "#" + r.calendar_id),
        " ", h("span", { class: "muted mono", title: r.calendar_version }, "v" + (r.calendar_version || "").slice(0, 8)))] : null,
      [t("run.created"), absTime(r.created_at)],
      // Assigned: when the leader placed its slots; first slot started: when
      // one ran on an executor — the start users feel (+ since scheduled).
      [t("run.assigned"), r.started_at ? [absTime(r.started_at), h("span", { class: "muted" }, " (+", fmtDur(started - Date.parse(r.scheduled_at)), ")")] : "—"],
      [t("run.firstSlot"), r.first_slot_started_at ? h("span", { id: "run-first-slot" }, absTime(r.first_slot_started_at), h("span", { class: "muted" }, " (+", fmtDur(Date.parse(r.first_slot_started_at) - Date.parse(r.scheduled_at)), ")"))
        : (ACTIVE.has(r.status) ? h("span", { class: "muted", id: "run-first-slot" }, t("run.noSlotYet")) : "—")],
      [t("run.finished"), r.finished_at ? absTime(r.finished_at) : (ACTIVE.has(r.status) ? h("span", { class: "muted" }, t("run.inProgress")) : "—")],
      [t("col.duration"), started ? fmtDur((finished || now) - started) : "—"],
      r.predicted_ms != null ? [t("run.predicted"), fmtDur(r.predicted_ms)] : null,
      r.start_deadline_at ? [t("run.startDeadline"), deadlineCell("run-start-deadline", r.start_deadline_at, startState(r, now))] : null,
      r.finish_deadline_at ? [t("run.finishDeadline"), deadlineCell("run-finish-deadline", r.finish_deadline_at, finishState(r, now),
        r.deadline_action === "cancel" ? t("run.deadlineCancels") : "")] : null,
    ], "kv-compact"));
  }

  // Deadlines (docs/schedules.md): met, missed, open (not passed yet), or
  // ended (the run ended before its start deadline without starting).
  function startState(r, now) {
    const at = Date.parse(r.start_deadline_at);
    if (r.first_slot_started_at) return Date.parse(r.first_slot_started_at) <= at ? "met" : "missed";
    if (r.finished_at && Date.parse(r.finished_at) <= at) return "ended";
    return now > at ? "missed" : "open";
  }
  function finishState(r, now) {
    const at = Date.parse(r.finish_deadline_at);
    if (r.finished_at) return Date.parse(r.finished_at) <= at ? "met" : "missed";
    return now > at ? "missed" : "open";
  }
  function deadlineCell(id, iso, state, note) {
    const kinds = { met: "ok", missed: "bad", open: "muted", ended: "muted" };
    const labels = { met: "run.deadlineMet", missed: "run.deadlineMissed", open: "run.deadlineOpen", ended: "run.deadlineEnded" };
    return h("span", { id, "data-state": state }, absTime(iso), " ", pill(t(labels[state]), kinds[state]),
      note ? h("span", { class: "muted" }, " · ", note) : null);
  }

  function renderTimeline(r) {
    const now = Date.now();
    const sched = Date.parse(r.scheduled_at), created = Date.parse(r.created_at);
    const started = r.started_at ? Date.parse(r.started_at) : null;
    const finished = r.finished_at ? Date.parse(r.finished_at) : null;
    const atts = data.attempts.filter(a => a.started_at);
    let t0 = Math.min(sched, created), t1 = finished || now;
    for (const a of atts) { t0 = Math.min(t0, Date.parse(a.started_at)); t1 = Math.max(t1, a.finished_at ? Date.parse(a.finished_at) : now); }
    if (t1 - t0 < 50) t1 = t0 + 50;
    t1 += (t1 - t0) * 0.01;
    // One lane per executor; inside it, attempts are packed into rows so
    // that concurrent slots show side by side (a small Gantt chart).
    const execIds = [...new Set(atts.map(a => a.executor_id ?? -1))].slice(0, 12);
    const startOf = a => Date.parse(a.started_at), endOf = a => (a.finished_at ? Date.parse(a.finished_at) : now);
    const lanes = execIds.map(eid => {
      const list = atts.filter(a => (a.executor_id ?? -1) === eid).sort((a, b) => startOf(a) - startOf(b));
      const rowEnds = [];
      const placed = list.map(a => {
        let r = rowEnds.findIndex(e => e <= startOf(a));
        if (r < 0) r = rowEnds.length < 16 ? rowEnds.push(0) - 1 : rowEnds.indexOf(Math.min(...rowEnds));
        rowEnds[r] = endOf(a);
        return { a, r };
      });
      return { eid, placed, rows: Math.max(1, rowEnds.length) };
    });
    const rowH = 7, top = 30, L = 170, R = 16;
    const W = Math.max(300, timeline.clientWidth || 900);
    let y0 = top + 22;
    const laneY = lanes.map(l => { const y = y0; y0 += l.rows * rowH + 9; return y; });
    const H = y0 + 18;
    const x = v => L + ((v - t0) / (t1 - t0)) * (W - L - R);
    const g = s("svg", { class: "chart timeline", width: W, height: H, viewBox: `0 0 ${W} ${H}` });
    // Run phases: waiting (created or scheduled → started), running.
    const phaseY = top;
    const from = Math.min(sched, created);
    g.append(s("text", { class: "lane-label", x: 8, y: phaseY + 11 }, t("run.phaseRun")));
    g.append(s("rect", { class: "phase-wait", x: x(from), y: phaseY, width: Math.max(1, x(started || now) - x(from)), height: 14, rx: 2 }));
    if (started) g.append(s("rect", { class: ["phase-run", "st-" + r.status], x: x(started), y: phaseY, width: Math.max(2, x(finished || now) - x(started)), height: 14, rx: 2 }));
    lanes.forEach((l, li) => {
      const y = laneY[li], hgt = l.rows * rowH + 3;
      g.append(s("text", { class: "lane-label", x: 8, y: y + Math.min(hgt, 14) - 3 }, l.eid === -1 ? t("run.unplaced") : execLabel(l.eid).slice(0, 24)));
      g.append(s("rect", { class: "lane-bg", x: L, y, width: W - L - R, height: hgt, rx: 2 }));
      for (const { a, r: row } of l.placed) {
        const a0 = startOf(a), a1 = endOf(a);
        const bar = s("rect", { class: ["att", "s-" + a.status], x: x(a0).toFixed(2), y: y + 2 + row * rowH, width: Math.max(1.5, x(a1) - x(a0)).toFixed(2), height: rowH - 2, rx: 1 });
        bar.addEventListener("mousemove", ev => showTip(bar, slotTip(a.slot), ev.clientX, ev.clientY));
        bar.addEventListener("mouseleave", () => hideTip(bar));
        bar.addEventListener("click", () => select(a.slot));
        g.append(bar);
      }
    });
    // Markers: a label above, the time below; a label that would overlap
    // the previous one moves to the second row.
    const marks = [[sched, t("run.scheduled"), "m-sched"], [created, t("run.created"), "m-created"]];
    if (started) marks.push([started, t("run.started"), "m-started"]);
    if (finished) marks.push([finished, t("run.finished"), "m-finished"]);
    const lastByRow = [-1e9, -1e9];
    marks.sort((a, b) => a[0] - b[0]).forEach(([v, label, cls]) => {
      const xx = x(v);
      const row = xx - lastByRow[0] >= 80 ? 0 : xx - lastByRow[1] >= 80 ? 1 : -1;
      g.append(s("line", { class: ["marker", cls], x1: xx, x2: xx, y1: 4, y2: H - 18 }, s("title", {}, `${label} ${fmtTime(v, true)}`)));
      if (row < 0) return;
      lastByRow[row] = xx;
      const anchor = xx > W - 90 ? "end" : "start";
      const dx = anchor === "end" ? -4 : 4;
      g.append(s("text", { class: ["marker-label", cls], x: xx + dx, y: row ? 22 : 11, "text-anchor": anchor }, label));
      if (row === 0) g.append(s("text", { class: "axis", x: xx, y: H - 6, "text-anchor": xx < L + 30 ? "start" : "middle" }, fmtTime(v, true)));
    });
    hideTipWithin(timeline);
    fill(timeline, g);
  }

  function renderExecutors() {
    const now = Date.now();
    const rows = new Map();
    for (const a of current.values()) {
      const k = a.executor_id ?? -1;
      const e = rows.get(k) || { id: k, slots: 0, succeeded: 0, failed: 0, running: 0, processed: 0, busy: 0 };
      e.slots++;
      if (a.status === "succeeded") e.succeeded++; else if (a.status === "failed") e.failed++; else if (ACTIVE_SLOT.has(a.status)) e.running++;
      e.processed += a.processed;
      e.busy += dur(a, now) || 0;
      rows.set(k, e);
    }
    const list = [...rows.values()].sort((a, b) => b.slots - a.slots);
    fill(execBody, ...(list.length ? list.map(e => h("tr", {},
      h("td", {}, e.id === -1 ? h("span", { class: "muted" }, t("run.unplaced")) : h("span", { title: execs.get(e.id)?.address || "" }, execLabel(e.id), h("div", { class: "sub-line mono" }, execs.get(e.id)?.address || ""))),
      h("td", { class: "num" }, fmtNum(e.slots)), h("td", { class: "num" }, fmtNum(e.succeeded)),
      h("td", { class: ["num", e.failed && "text-bad"] }, fmtNum(e.failed)), h("td", { class: "num" }, fmtNum(e.running)),
      h("td", { class: "num" }, fmtNum(e.processed)), h("td", { class: "num" }, fmtDur(e.busy))))
      : [h("tr", {}, h("td", { colspan: 7, class: "muted center" }, t("run.noAttempts")))]));
  }

  function renderFailures() {
    const failed = [...current.values()].filter(a => a.status === "failed" || a.error).sort((a, b) => a.slot - b.slot);
    fill(failBox, failed.length ? h("div", { class: "table-wrap" }, h("table", { class: "table table-compact table-hover" },
      h("thead", {}, h("tr", {}, h("th", { class: "num" }, t("col.slot")), h("th", {}, t("col.executor")), h("th", {}, t("col.errorClass")), h("th", {}, t("col.error")))),
      h("tbody", {}, failed.slice(0, 100).map(a => h("tr", { class: "clickable", onclick: () => select(a.slot) },
        h("td", { class: "num mono" }, t("run.slotN", { n: a.slot })), h("td", {}, execLabel(a.executor_id)), h("td", {}, classPill(a)),
        h("td", { class: "error-cell" }, h("span", { title: errText(a) }, errText(a) || stLabel(a.status))))))))
      : emptyState(t("run.noFailedSlots")));
  }

  async function cancelRun() {
    const reason = h("input", { id: "cancel-reason", placeholder: t("run.cancelReasonPh") });
    const ok = await confirmDialog({
      id: "cancel-dialog", title: t("run.cancelTitle", { id }), danger: true, confirmLabel: t("run.cancel"),
      message: h("div", { class: "form-stack" }, h("p", {}, t("run.cancelConfirm")),
        h("label", { class: "field" }, h("span", { class: "field-label" }, t("run.cancelReason")), reason)),
      onConfirm: () => api("POST", `/runs/${id}/cancel`, reason.value ? { reason: reason.value } : {}),
    });
    if (ok) { toast(t("run.cancelled", { id })); ctx.refreshNow(); }
  }

  async function retry(btn) {
    try {
      const res = await busy(btn, api("POST", `/runs/${id}/retry`));
      toast(t("run.retried", { n: res.retried_slots }));
      ctx.refreshNow();
    } catch (e) { toast(e.message, "error"); }
  }

  async function refresh() {
    const now = Date.now();
    const [d, ex] = await Promise.all([api("GET", `/runs/${id}`), now - execsAt > 15000 ? api("GET", "/executors") : null]);
    if (!ctx.isCurrent()) return;
    if (ex) { execs = new Map(ex.executors.map(e => [e.id, e])); execsAt = now; }
    data = d;
    bySlot = new Map();
    current = new Map();
    for (const a of d.attempts) {
      if (a.executor_id != null && a.executor) execNames.set(a.executor_id, a.executor);
      if (!bySlot.has(a.slot)) bySlot.set(a.slot, []);
      bySlot.get(a.slot).push(a);
      if (a.current) current.set(a.slot, a);
    }
    for (const l of bySlot.values()) l.sort((a, b) => b.attempt - a.attempt || b.token - a.token);
    // A slot with attempts but none current shows its newest attempt.
    for (const [slot, l] of bySlot) if (!current.has(slot)) current.set(slot, l[0]);
    if (cells.length !== d.run.slots) buildGrid(d.run.slots);
    renderHeader(d.run);
    renderResult(d.result);
    renderSummary(d.run);
    paintGrid();
    renderTimeline(d.run);
    renderExecutors();
    renderFailures();
    renderSlotPanel();
    // Not awaited: a slow logs query does not hold the page's refresh; a
    // failed one is retried at the next refresh.
    logs.refresh(d.run).catch(e => console.warn("run logs:", e.message));
    document.title = t("run.title", { id }) + " · " + stLabel(d.run.status) + " · shardjob";
  }

  return { refresh, interval: () => (data && ACTIVE.has(data.run.status) ? 1000 : 5000) };
}
