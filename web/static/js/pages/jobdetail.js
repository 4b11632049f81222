// One job: definition, actions, next firings and its recent runs with a
// duration chart.
import { api, ApiError } from "../api.js";
import { t, tOr, fmtDur, fmtDateTime, fmtInZone, fmtNum, fmtRel, errText, noteText, srvText, firingZone, warningTexts } from "../i18n.js";
import { h, card, kv, badge, relTime, absTime, syncTable, emptyState, pill, fill, button, toast } from "../dom.js";
import { backfillDialog } from "./backfill.js";
import { durationBars } from "../charts.js";
import { actionButtons, jobState, STATE_PILL } from "./jobactions.js";
import { alarmRoutesCard } from "./alarmroutes.js";
import { waitsText } from "./jobform.js";

/** handlerDecides marks a records policy field left to the handler's Config. */
function handlerDecides() {
  return h("span", { class: "muted" }, t("records.handlerDecides"));
}

function runDuration(r) {
  if (!r.started_at) return null;
  return (r.finished_at ? Date.parse(r.finished_at) : Date.now()) - Date.parse(r.started_at);
}

export default function mount(root, ctx) {
  const id = Number(ctx.params.id);
  let job = null;
  let previewFor = "";
  const title = h("h1", {});
  const sub = h("div", { class: "page-sub" });
  const actions = h("div", { class: "page-actions", id: "job-actions" });
  const defBox = h("div");
  // What the job would meet though valid (no executor of its app has its
  // handler yet): shown until it no longer holds.
  const warnBox = h("div", { id: "job-warnings", hidden: true });
  const nextBox = h("div", { id: "job-next" });
  const chart = h("div", { class: "chart-box", id: "chart-durations" });
  const tbody = h("tbody");
  const RUNS = 50, PER = 10;
  let page = 0, lastRuns = [];
  const prevBtn = h("button", { type: "button", class: "btn btn-secondary btn-sm", id: "job-runs-prev", onclick: () => turn(-1) }, "‹ ", t("job.newer"));
  const nextBtn = h("button", { type: "button", class: "btn btn-secondary btn-sm", id: "job-runs-next", onclick: () => turn(1) }, t("job.older"), " ›");
  const pagerText = h("span", { class: "muted", id: "job-runs-page" });
  const pager = h("div", { class: "table-foot pager", hidden: true }, prevBtn, pagerText, nextBtn);
  const runsEmpty = h("div", { hidden: true }, emptyState(t("job.noRuns")));
  const routes = alarmRoutesCard(id, ctx);

  root.append(
    h("div", { class: "breadcrumbs" }, h("a", { href: "#/jobs" }, t("nav.jobs")), h("span", {}, "/"), h("span", { id: "crumb" }, "#" + id)),
    h("div", { class: "page-head" }, h("div", { class: "page-title" }, title, sub), actions),
    warnBox,
    h("div", { class: "grid grid-detail" },
      card(t("job.definition"), defBox),
      card(t("job.nextFirings"), nextBox, { sub: t("job.nextSub") })),
    card(t("job.recentRuns"), [chart,
      h("div", { class: "table-wrap", id: "job-runs-wrap" }, h("table", { class: "table table-hover", id: "job-runs" },
        h("thead", {}, h("tr", {}, h("th", { class: "num" }, t("col.run")), h("th", {}, t("col.scheduled")), h("th", {}, t("col.trigger")),
          h("th", {}, t("col.status")), h("th", {}, t("col.slots")), h("th", { class: "num" }, t("col.duration")), h("th", {}, t("col.error")))),
        tbody)), pager, runsEmpty], { flush: true, actions: h("a", { class: "link", href: `#/runs?job_id=${id}` }, t("common.viewAll")) }),
    routes.el);
  routes.load();

  // The recent runs' table shows PER at a time of the RUNS the chart draws;
  // older ones are on the Runs page ("View all").
  function renderPager() {
    const pages = Math.ceil(lastRuns.length / PER);
    pager.hidden = pages <= 1;
    prevBtn.disabled = page === 0;
    nextBtn.disabled = page >= pages - 1;
    pagerText.textContent = t("job.runsPage", { from: page * PER + 1, to: Math.min(lastRuns.length, (page + 1) * PER), n: lastRuns.length });
  }
  function turn(d) { page += d; renderPager(); refresh(); }

  tbody.addEventListener("click", ev => {
    const tr = ev.target.closest("tr");
    if (tr && tr.dataset.key && !ev.target.closest("a")) ctx.navigate("#/runs/" + tr.dataset.key);
  });

  function renderJob() {
    const st = jobState(job);
    fill(title, h("span", { class: "app-tag app-tag-lg" }, job.app), job.name, " ",
      Object.assign(pill(t("jobs.state." + st), STATE_PILL[st]), { id: "job-state-pill" }));
    sub.textContent = job.description || "";
    const warns = warningTexts(job);
    const wsig = warns.join("\n");
    if (warnBox.dataset.sig !== wsig) {
      fill(warnBox, ...warns.map(w => h("div", { class: "callout callout-warn" }, w)));
      warnBox.hidden = !warns.length;
      warnBox.dataset.sig = wsig;
    }
    document.getElementById("crumb").textContent = job.name;
    // The job of a workflow's inline node changes with its workflow only:
    // no actions here, a link to the workflow instead.
    if (job.workflow_id) fill(actions, h("a", { class: "btn btn-secondary", id: "job-workflow", href: `#/workflows/${job.workflow_id}` }, t("job.openWorkflow")));
    else fill(actions, ...actionButtons(job, ctx, j => { if (j === null) ctx.navigate("#/jobs"); else ctx.refreshNow(); }, { inline: true }),
      ctx.can("operator") ? button(t("job.backfill"), { size: "sm", icon: "retry", id: "job-backfill", onclick: () => backfill() }) : null);
    fill(defBox, kv([
      job.workflow_id ? [t("job.workflowOwned"), h("a", { href: `#/workflows/${job.workflow_id}`, id: "job-workflow-owned" }, t("job.workflowOwnedText", { id: job.workflow_id }))] : null,
      [t("field.handler"), h("code", {}, job.handler)],
      [t("field.cron"), h("span", {}, h("code", {}, job.cron), " ", h("span", { class: "muted", id: "job-zones" }, (job.time_zones || [job.time_zone]).join(" · ")))],
      [t("field.slots"), fmtNum(job.slots)],
      [t("field.params"), job.params ? h("code", { class: "wrap" }, job.params) : "—"],
      [t("field.slot_params"), job.slot_params ? h("code", { class: "wrap" }, job.slot_params) : "—"],
      [t("field.misfire_policy"), `${tOr("misfire." + job.misfire_policy, job.misfire_policy)} · ${fmtDur(job.misfire_threshold_ms)}` + (job.misfire_policy === "catch_up" ? ` · ≤ ${job.max_catch_up}` : "")],
      [t("field.overlap_policy"), tOr("overlap." + job.overlap_policy, job.overlap_policy)],
      [t("field.timeout_ms"), job.timeout_ms ? fmtDur(job.timeout_ms) : t("job.noTimeout")],
      [t("field.priority"), h("span", { id: "job-priority" }, tOr("priority." + job.priority, job.priority))],
      [t("field.max_running_slots"), h("span", { id: "job-max-running-slots" }, job.max_running_slots ? fmtNum(job.max_running_slots) : t("job.noCap"))],
      [t("field.retry_max"), job.retry_max ? t("job.retries", { n: job.retry_max, backoff: fmtDur(job.retry_backoff_ms) }) : t("job.noRetry")],
      [t("field.retry_budget_percent"), h("span", { id: "job-retry-budget" }, job.retry_budget_percent
        ? t("job.retryBudget", { percent: job.retry_budget_percent, window: job.retry_budget_window }) : t("job.noBudget"))],
      [t("job.breaker"), breakerView(job)],
      [t("field.dedup_scope"), h("span", { id: "job-dedup-scope" }, job.dedup_scope
        ? [h("code", {}, job.dedup_scope), " ", h("span", { class: "muted" }, t(job.dedup_scope === "run" || job.dedup_scope === "job" ? "scope." + job.dedup_scope : "scope.named"))]
        : handlerDecides())],
      [t("field.uncertain_policy"), h("span", { id: "job-uncertain-policy" }, job.uncertain_policy ? tOr("uncertain." + job.uncertain_policy, job.uncertain_policy) : handlerDecides())],
      [t("field.record_max_attempts"), h("span", { id: "job-record-max-attempts" }, job.record_max_attempts ? fmtNum(job.record_max_attempts) : handlerDecides())],
      [t("field.start_deadline"), h("span", { id: "job-start-deadline" }, job.start_deadline ? h("code", {}, job.start_deadline) : t("deadline.none"))],
      [t("field.finish_deadline"), h("span", { id: "job-finish-deadline" }, job.finish_deadline
        ? [h("code", {}, job.finish_deadline), " ", h("span", { class: "muted" }, tOr("deadline." + job.deadline_action, job.deadline_action))]
        : t("deadline.none"))],
      job.calendar_id ? [t("job.calendar"), h("span", { id: "job-calendar" }, h("a", { class: "mono", href: `#/calendars/${job.calendar_id}` }, "#" + job.calendar_id), " ",
        tOr("calrule." + job.calendar_rule, job.calendar_rule), job.calendar_rule === "shift" ? " · " + tOr("calshift." + job.calendar_shift, job.calendar_shift) : "")] : null,
      [t("job.window"), h("span", { id: "job-window" }, job.start_at || job.end_at || job.max_runs
        ? [job.start_at ? t("job.windowFrom", { at: fmtDateTime(job.start_at) }) : null, job.start_at && job.end_at ? " · " : null,
          job.end_at ? t("job.windowTo", { at: fmtDateTime(job.end_at) }) : null, (job.start_at || job.end_at) && job.max_runs ? " · " : null,
          job.max_runs ? t("job.windowRuns", { n: job.max_runs }) : null]
        : t("job.noWindow"))],
      [t("field.jitter_window"), h("span", { id: "job-jitter-window" }, job.jitter_window ? h("code", {}, job.jitter_window) : t("deadline.none"))],
      [t("field.wait_for"), h("span", { id: "job-waits" }, job.wait_for && job.wait_for.length
        ? [h("code", { class: "wrap" }, waitsText(job.wait_for).split("\n").join(", ")), " ",
          h("span", { class: "muted" }, t("job.waitsTimeout", { timeout: job.wait_timeout, action: tOr("ontimeout." + job.on_timeout, job.on_timeout) }))]
        : t("deadline.none"))],
      st === "paused" && job.paused_until ? [t("jobs.state.paused"), t("job.pausedUntil", { at: fmtDateTime(job.paused_until) })] : null,
      st === "completed" ? [t("jobs.state.completed"), h("span", { id: "job-completed" }, completedText(job), " ",
        h("span", { class: "muted" }, fmtDateTime(job.completed_at)))] : null,
      [t("field.child_job_ids"), job.child_job_ids && job.child_job_ids.length ? job.child_job_ids.map(c => h("a", { href: "#/jobs/" + c, class: "link id-link" }, "#" + c)) : "—"],
      [t("col.nextFire"), st === "scheduled" && job.next_fire_at ? h("span", { id: "job-next-fire", dataset: { at: job.next_fire_at } }, absTime(job.next_fire_at), " ", h("span", { class: "muted" }, "(", relTime(job.next_fire_at), ")")) : "—"],
      [t("job.version"), `v${job.version} · ${t("job.updated")} ${fmtDateTime(job.updated_at)}`],
    ]));
  }

  // backfill creates the job's runs of a range of business dates after a
  // dry run (backfill.js), then shows them in the runs below.
  async function backfill() {
    const plan = await backfillDialog({ id: "job-backfill-dialog", title: t("job.bfTitle", { name: `${job.app}/${job.name}` }),
      intro: t("job.bfIntro", { zone: job.time_zone }), path: `/jobs/${job.id}/backfill` });
    if (!plan) return;
    toast(t("job.backfilled", { created: plan.created, dates: plan.dates.length }));
    page = 0;
    ctx.refreshNow();
  }

  // breakerView is the job's circuit breaker (docs/failures.md): off, closed
  // (with failures counted), open (since, why, probe at) or probing, and the
  // operator's Close breaker button while it is not closed.
  function breakerView(j) {
    if (!j.breaker_threshold) return h("span", { id: "job-breaker" }, t("job.noBreaker"));
    const b = j.breaker || { state: "closed", failures: 0 };
    const why = b.reason_code ? srvText(b.reason_code.code, b.reason_code.args, b.reason) : (b.reason || "");
    const parts = [h("span", { class: ["pill", { open: "pill-bad", probing: "pill-warn" }[b.state]], id: "job-breaker-state" }, t("breaker." + b.state)), " ",
      h("span", { class: "muted" }, t("job.breakerSettings", { threshold: j.breaker_threshold, cooldown: j.breaker_cooldown, failures: b.failures }))];
    if (b.state !== "closed") {
      parts.push(h("div", { id: "job-breaker-why" }, t("job.breakerOpened", { at: fmtDateTime(b.opened_at), why })));
      if (b.state === "open" && b.probe_at) parts.push(h("div", { id: "job-breaker-probe" }, t("job.breakerProbeAt", { at: fmtDateTime(b.probe_at) })));
      if (b.state === "probing") parts.push(h("div", { id: "job-breaker-probe" }, t("job.breakerProbing", { token: b.probe_token })));
      if (ctx.can("operator")) parts.push(h("div", {}, button(t("job.closeBreaker"), { size: "sm", id: "job-breaker-close", onclick: async () => {
        try {
          await api("POST", `/jobs/${j.id}/breaker/close`);
          toast(t("job.breakerClosed"));
          ctx.refreshNow();
        } catch (e) { toast(errText(e), "error"); }
      } })));
    }
    return h("span", { id: "job-breaker" }, parts);
  }

  function completedText(j) {
    const c = j.completed_reason_code;
    return c ? srvText(c.code, c.args, j.completed_reason) : (j.completed_reason || "");
  }

  async function renderNext() {
    // Computed again when the job's next fire moves (it fired), so that
    // the first row stays "Next fire".
    const key = job.cron + "|" + job.time_zone + "|" + (job.time_zones || []).join(",") + "|" + job.version + "|" + st() + "|" + job.next_fire_at;
    if (key === previewFor) return;
    previewFor = key;
    try {
      const res = await api("POST", "/jobs/validate", {
        app: job.app, name: job.name, handler: job.handler, cron: job.cron, time_zone: job.time_zone, time_zones: job.time_zones, slots: job.slots,
        slot_params: job.slot_params, misfire_policy: job.misfire_policy, overlap_policy: job.overlap_policy,
        calendar_id: job.calendar_id || 0, calendar_rule: job.calendar_rule || "", calendar_shift: job.calendar_shift || "",
        start_at: job.start_at || null, end_at: job.end_at || null,
      });
      // The scheduler creates a run shortly before its time: firings
      // before the job's next fire have their run already (Runs below).
      const from = job.next_fire_at ? Date.parse(job.next_fire_at) : 0;
      // Only firings that happen: none while disabled, completed or paused
      // without an end; while paused until a time, those after it.
      const end = st() === "paused" && job.paused_until ? Date.parse(job.paused_until) : 0;
      const next = st() === "scheduled" || end ? (res.next || []).filter(f => Date.parse(f.at) >= Math.max(from, end)).slice(0, 6) : [];
      const multi = (job.time_zones || []).length > 1; // each firing in its own zone
      const utc = !multi && ["UTC", "Etc/UTC", "Etc/GMT", "GMT"].includes(job.time_zone); // one column is enough
      fill(nextBox, 
        st() !== "scheduled" ? h("div", { class: "callout callout-warn", id: "job-not-firing", dataset: { state: st() } }, t("job.notFiring." + st() + (end ? "Until" : "")),
          st() === "completed" ? h("div", { class: "muted" }, completedText(job)) : null,
          st() === "paused" && job.paused_until ? h("div", { id: "job-paused-until" }, t("job.pausedUntil", { at: fmtDateTime(job.paused_until) })) : null) : null,
        res.resolved !== job.cron ? h("div", { class: "pv-resolved" }, h("span", { class: "muted" }, t("form.resolved")), " ", h("code", {}, res.resolved)) : null,
        next.length ? h("table", { class: "table table-compact" },
          h("thead", {}, h("tr", {}, h("th", {}, multi ? t("form.firingZone") : job.time_zone), utc ? null : h("th", {}, "UTC"), h("th", {}, ""))),
          h("tbody", {}, next.map(f => [h("tr", { dataset: { at: f.at, skipped: f.skipped ? "1" : "" }, class: f.skipped ? "pv-skipped" : "" },
            h("td", { class: "mono nowrap" }, h("span", { class: "pv-main" }, f.local || fmtInZone(f.at, f.zone || job.time_zone)), multi ? firingZone(f) : null),
            utc ? null : h("td", { class: "mono nowrap muted" }, h("span", { class: "pv-sub" }, fmtInZone(f.at, "UTC"))),
            h("td", { class: "muted nowrap" }, fmtRel(f.at))),
          f.note ? h("tr", { class: "note-row" }, h("td", { colspan: utc ? 2 : 3 }, f.skipped || f.shifted_from
            ? h("span", { class: "cal-note" }, f.skipped ? "⊘ " : "↷ ", noteText(f))
            : h("span", { class: "dst-note" }, "⚠ ", noteText(f)))) : null]))) : null);
    } catch (e) {
      fill(nextBox, h("div", { class: "callout callout-bad" }, e.message));
    }
  }
  const st = () => jobState(job);

  async function refresh() {
    const [j, rs] = await Promise.all([api("GET", `/jobs/${id}`).catch(e => e), api("GET", `/runs?job_id=${id}&limit=${RUNS}`)]);
    if (!ctx.isCurrent()) return;
    if (j instanceof Error) {
      // A deleted job: its runs keep its name and say so (job_deleted).
      const r = rs.runs[0];
      if (!(j instanceof ApiError) || j.status !== 404 || !r || !r.job_deleted) throw j;
      root.classList.remove("is-loading");
      fill(root, h("div", { class: "page-error", id: "job-deleted" },
        emptyState(t("job.deletedTitle", { id }), t("job.deletedText", { name: `${r.app}/${r.job_name}` })),
        h("a", { class: "btn btn-secondary", id: "job-deleted-runs", href: `#/runs?job_id=${id}` }, t("job.deletedRuns"))));
      return;
    }
    job = j;
    renderJob();
    renderNext();
    const runs = rs.runs;
    const items = runs.slice(0, 60).reverse().map(r => ({
      value: runDuration(r) || 0,
      cls: "st-" + r.status,
      href: "#/runs/" + r.id,
      tip: () => h("div", { class: "tip-body" }, h("div", { class: "tip-title" }, `#${r.id} · ${fmtDateTime(r.scheduled_at)}`),
        h("div", { class: "tip-row" }, t("col.status"), h("b", {}, badge(r.status, "badge-sm"))),
        h("div", { class: "tip-row" }, t("col.duration"), h("b", {}, fmtDur(runDuration(r))))),
    }));
    durationBars(chart, items, { height: 110, yFormat: v => fmtDur(v), slots: 50 });
    chart.hidden = !runs.length;
    runsEmpty.hidden = !!runs.length;
    document.getElementById("job-runs-wrap").hidden = !runs.length;
    lastRuns = runs;
    page = Math.min(page, Math.max(0, Math.ceil(runs.length / PER) - 1));
    renderPager();
    syncTable(tbody, runs.slice(page * PER, (page + 1) * PER), r => r.id, [
      { class: "num mono", sig: r => r.id, cell: r => h("a", { href: "#/runs/" + r.id }, "#" + r.id) },
      { sig: r => r.scheduled_at + r.status + r.start_after, cell: r => [absTime(r.scheduled_at), startAfterLine(r)] },
      { sig: r => r.trigger, cell: r => tOr("trigger." + r.trigger, r.trigger) },
      { sig: r => r.status, cell: r => badge(r.status) },
      { sig: r => `${r.slots_succeeded}/${r.slots_failed}/${r.slots}`, cell: r => slotBar(r) },
      { class: "num", sig: r => r.status + r.started_at + r.finished_at, cell: r => fmtDur(runDuration(r)) },
      { class: "error-cell", sig: r => errText(r), cell: r => r.error ? h("span", { title: errText(r) }, errText(r)) : "" },
    ]);
  }

  return { refresh, interval: () => 4000 };
}

/**
 * runJobName names a run's job for lists: the job's name, or for the
 * hidden job of a workflow's inline node ("@<workflow>/<node>", see
 * store.InlineJobName) its workflow and node.
 */
export function runJobName(r) {
  const m = /^@(\d+)\/(.+)$/.exec(r.job_name || "");
  return m ? t("run.inlineNode", { workflow: m[1], node: m[2] }) : r.job_name;
}

/**
 * startAfterLine says when a pending jittered run may start (start_after,
 * with the offset from its scheduled time); null for any other run.
 */
export function startAfterLine(r) {
  if (r.status !== "pending" || !r.start_after) return null;
  return h("div", { class: "sub-line run-start-after", title: t("run.startAfterTip") },
    t("form.startsAfter", { at: fmtDateTime(r.start_after), offset: fmtDur(Date.parse(r.start_after) - Date.parse(r.scheduled_at)) }));
}

/** slotBar draws succeeded / failed / remaining slots of a run. */
export function slotBar(r) {
  const total = Math.max(1, r.slots);
  const ok = h("span", { class: "sb-ok" }), bad = h("span", { class: "sb-fail" });
  ok.style.setProperty("width", (100 * r.slots_succeeded / total).toFixed(2) + "%");
  bad.style.setProperty("width", (100 * r.slots_failed / total).toFixed(2) + "%");
  // Failed slots are counted apart: "8/8" is a run whose slots all succeeded.
  const text = r.slots_failed
    ? [h("span", { class: "sb-ok-n" }, t("slots.okN", { n: r.slots_succeeded })), " · ",
      h("span", { class: "sb-fail-n text-bad" }, t("slots.failedN", { n: r.slots_failed })), ` / ${r.slots}`]
    : `${r.slots_succeeded}/${r.slots}`;
  return h("div", { class: "slotbar-wrap", title: t("slots.tip", { ok: r.slots_succeeded, failed: r.slots_failed, total: r.slots }) },
    h("div", { class: "slotbar" }, ok, bad), h("span", { class: "slotbar-text" }, text));
}
