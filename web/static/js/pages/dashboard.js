// Dashboard: runs over the chosen window drawn as charts (runs ended per
// bucket by outcome, success rate, start lag), executor utilization per
// app over its own window (the leader's samples), executors, leader and
// replicas, upcoming firings and recent failures. The window's figures
// come from GET /dashboard, the leader's per-minute rollup: the whole
// window whatever the number of runs, up to the last minute folded (the
// page says up to when). The per-job table, the recent failures and the
// apps' queue wait are of the latest runs (one page of /runs), and say so.
// Built from /dashboard, /runs, /jobs, /executors, /cluster, /alarms (the
// count of open alarms) and /stats/utilization.
import { api } from "../api.js";
import { t, fmtDur, fmtNum, fmtPct, fmtDateTime, fmtHM, errText } from "../i18n.js";
import { h, card, pageHead, badge, relTime, emptyState, pill, fill, syncTable } from "../dom.js";
import { stackedBars, lines, legend } from "../charts.js";
import { startLag } from "../lag.js";
import { runJobName } from "./jobdetail.js";

// The windows GET /dashboard answers.
const WINDOWS = [["1h"], ["6h"], ["24h"], ["7d"]];
// The latest runs the per-job table, the recent failures and the apps'
// queue wait are of.
const LATEST_RUNS = 500;
let savedWindow = "1h";
// The utilization chart's windows, in hours; the API answers up to 7 days.
const UTIL_WINDOWS = [["1h", 1], ["6h", 6], ["24h", 24], ["7d", 168]];
let savedUtilWindow = "6h";
// Samples come every 30 s by default: fetch them again at most this often.
const UTIL_REFETCH_MS = 15000;
// Colours of the apps' lines (console.css: c-app0 … c-app7).
const APP_COLOURS = 8;

function classify(st) {
  if (st === "succeeded") return "ok";
  if (st === "failed" || st === "partially_failed") return "failed";
  if (st === "pending" || st === "running") return "active";
  return "other";
}

/** lagText shows a percentile of GET /dashboard: at most its bucket's
 * bound ("≤ 250 ms"), or beyond the largest ("> 15 min"). */
function lagText(p) {
  if (!p) return "—";
  return (p.above ? "> " : "≤ ") + fmtDur(p.ms);
}

function quantile(sorted, q) {
  if (!sorted.length) return null;
  const i = (sorted.length - 1) * q, lo = Math.floor(i), hi = Math.ceil(i);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (i - lo);
}

/** queueOf is how long a run's first slot waited for capacity once the
 * run was assigned: first slot started − started_at, in ms. */
function queueOf(r) {
  if (!r.started_at || !r.first_slot_started_at) return null;
  return Math.max(0, Date.parse(r.first_slot_started_at) - Date.parse(r.started_at));
}

/** utilBar draws busy slots against capacity. */
function utilBar(busy, cap) {
  const r = cap ? Math.min(1, busy / cap) : 0;
  const bar = h("span", { class: ["rate-fill", r >= 0.95 ? "bad" : r >= 0.75 ? "warn" : "good"] });
  bar.style.setProperty("width", (r * 100).toFixed(1) + "%");
  return h("div", { class: "rate util", title: `${busy} / ${cap}` }, h("div", { class: "rate-track" }, bar), h("span", { class: "rate-text" }, cap ? fmtPct(busy / cap) : "—"));
}

/** segmented renders a row of window buttons; pick(key) on a click. */
function segmented(id, windows, current, labelKey, pick) {
  const seg = h("div", { class: "segmented", role: "tablist", id }, windows.map(([k]) =>
    h("button", { type: "button", class: k === current && "active", dataset: { win: k }, onclick: ev => {
      seg.querySelectorAll("button").forEach(b => b.classList.toggle("active", b.dataset.win === k));
      pick(k);
      ev.currentTarget.blur();
    } }, t(labelKey + k))));
  return seg;
}

/** utilSeries turns the answer of /stats/utilization into one line per app
 * (busy ÷ capacity in %) over buckets from `from` to `to`: a bucket without
 * a sample is a gap. Each bucket keeps the apps' points for the tooltip. */
function utilSeries(u, from, to) {
  const width = u.bucket_seconds * 1000;
  const series = u.apps.map((a, i) => ({ key: a.app, label: a.app, cls: "c-app" + (i % APP_COLOURS) }));
  const byApp = new Map(u.apps.map(a => [a.app, new Map(a.points.map(p => [Date.parse(p.at), p]))]));
  const buckets = [];
  for (let at = Math.floor(from / width) * width; at < to; at += width) {
    const values = {}, points = {};
    for (const a of u.apps) {
      const p = byApp.get(a.app).get(at);
      points[a.app] = p;
      values[a.app] = p && p.utilization != null ? p.utilization * 100 : null;
    }
    buckets.push({ t: at, values, points });
  }
  return { series, buckets, width };
}

function rateBar(r) {
  const bar = h("span", { class: ["rate-fill", r >= 0.99 ? "good" : r >= 0.9 ? "warn" : "bad"] });
  bar.style.setProperty("width", (r * 100).toFixed(1) + "%");
  return h("div", { class: "rate" }, h("div", { class: "rate-track" }, bar), h("span", { class: "rate-text" }, fmtPct(r)));
}

export default function mount(root, ctx) {
  let win = savedWindow;

  const seg = segmented("dash-window", WINDOWS, win, "dash.window.", k => { win = savedWindow = k; ctx.refreshNow(); });
  let utilWin = savedUtilWindow;
  let util = null; // the last answer of /stats/utilization, for utilWin
  const utilSeg = segmented("util-window", UTIL_WINDOWS, utilWin, "dash.utilWindow.", k => { utilWin = savedUtilWindow = k; util = null; ctx.refreshNow(); });
  const utilChart = h("div", { class: "chart-box", id: "chart-util" });
  const utilLegend = h("div", { id: "util-legend" });

  const rangeNote = h("p", { class: "footnote", id: "dash-range" });
  const stats = h("div", { class: "stats", id: "dash-stats" });
  const runsChart = h("div", { class: "chart-box", id: "chart-runs" });
  const rateChart = h("div", { class: "chart-box", id: "chart-rate" });
  const lagChart = h("div", { class: "chart-box", id: "chart-lag" });
  const runsTitle = h("span");
  const upcoming = h("div", { class: "list" });
  const recentFail = h("div", { class: "list" });
  const clusterBox = h("div");
  const perJob = h("tbody");

  const runSeries = [
    { key: "ok", label: t("dash.series.succeeded"), cls: "c-ok" },
    { key: "failed", label: t("dash.series.failed"), cls: "c-fail" },
    { key: "other", label: t("dash.series.other"), cls: "c-other" },
  ];
  const lagSeries = [
    { key: "p50", label: "p50", cls: "c-p50" },
    { key: "p95", label: "p95", cls: "c-p95" },
  ];

  root.append(
    pageHead(t("dash.title"), t("dash.sub"), seg),
    rangeNote,
    stats,
    h("div", { class: "grid grid-main" },
      card(runsTitle, [runsChart, legend(runSeries)], { class: "span-2", id: "card-runs" }),
      card(t("dash.rate"), rateChart, { sub: t("dash.rateSub") }),
      card(t("dash.lag"), [lagChart, legend(lagSeries)], { sub: t("dash.lagSub") })),
    card(t("dash.utilChart"), [utilChart, utilLegend], { id: "card-util", sub: t("dash.utilChartSub"), actions: utilSeg }),
    card(t("dash.perJob"), h("div", { class: "table-wrap" }, h("table", { class: "table table-hover", id: "dash-jobs" },
      h("thead", {}, h("tr", {}, h("th", {}, t("col.job")), h("th", { class: "num" }, t("dash.stat.runs")), h("th", { class: "num" }, t("status.failed")),
        h("th", {}, t("dash.rate")), h("th", { class: "num" }, t("dash.p95Duration")), h("th", { class: "num" }, t("dash.p95Lag")), h("th", {}, t("col.lastRun")))),
      perJob)), { flush: true, sub: t("dash.perJobSub") }),
    h("div", { class: "grid grid-2" },
      card(t("dash.upcoming"), upcoming, { flush: true, actions: h("a", { href: "#/jobs", class: "link" }, t("common.viewAll")) }),
      card(t("dash.recentFailures"), recentFail, { flush: true, actions: h("a", { href: "#/failures", class: "link" }, t("common.viewAll")) })),
    // The cluster card has a row of its own: its table of apps (six
    // columns) did not fit a third of the page at 1440 px.
    card(t("dash.cluster"), clusterBox, { id: "card-cluster", actions: h("a", { href: "#/cluster", class: "link" }, t("common.details")) }));

  // loadRuns is the latest runs, newest first (one page).
  async function loadRuns() {
    const { runs } = await api("GET", "/runs?limit=" + LATEST_RUNS);
    return runs;
  }

  // loadUtil fetches the samples of the utilization window again when the
  // window changed or the last answer is older than UTIL_REFETCH_MS. The
  // range ends a minute ahead of this browser's clock, so that a clock a
  // little behind the database's (which stamps the samples) loses none.
  async function loadUtil() {
    if (util && util.win === utilWin && Date.now() - util.fetched < UTIL_REFETCH_MS) return util;
    const hours = UTIL_WINDOWS.find(w => w[0] === utilWin)[1];
    const to = Date.now() + 60000, from = to - hours * 3600000;
    const q = new URLSearchParams({ from: new Date(from).toISOString(), to: new Date(to).toISOString() });
    const answer = await api("GET", "/stats/utilization?" + q);
    util = { win: utilWin, fetched: Date.now(), from, to, answer };
    return util;
  }

  function drawUtil(u) {
    const { series, buckets, width } = utilSeries(u.answer, u.from, u.to);
    const long = u.to - u.from > 24 * 3600000;
    const span = b => `${fmtDateTime(b.t)} – ${fmtHM(b.t + width)}`;
    lines(utilChart, buckets, series, {
      height: 200, yMax: 100, yFormat: v => v + "%", label: t("dash.utilChart"),
      xFormat: long ? v => fmtDateTime(v).slice(5, 16) : fmtHM, xLabelWidth: long ? 90 : 70,
      tip: b => h("div", { class: "tip-body" }, h("div", { class: "tip-title" }, span(b)),
        series.map(se => {
          const p = b.points[se.key];
          return h("div", { class: "tip-row" }, h("span", { class: ["swatch", se.cls] }), se.label,
            h("b", {}, p ? t("dash.utilTipRow", { busy: fmtNum(p.busy), cap: fmtNum(Math.round(p.capacity * 10) / 10),
              pct: p.utilization == null ? "—" : fmtPct(p.utilization), queued: fmtNum(p.queued) }) : "—"));
        })),
    });
    utilChart.dataset.apps = series.length;
    utilChart.dataset.points = buckets.reduce((n, b) => n + series.filter(se => b.values[se.key] != null).length, 0);
    fill(utilLegend, series.length ? legend(series) : emptyState(t("dash.utilNone"), t("dash.utilNoneSub")));
  }

  function stat(id, label, value, sub, kind, title) {
    return h("div", { class: ["stat", kind && "stat-" + kind], id: "stat-" + id, title },
      h("div", { class: "stat-label" }, label), h("div", { class: "stat-value" }, value), h("div", { class: "stat-sub" }, sub));
  }

  async function refresh() {
    // The jobs: the next seven to fire and the count (GET /jobs answers
    // both from indexes; the dashboard never loads every job).
    const [dash, runList, nextJobs, jobTotal, execs, cl, al, utilNow] = await Promise.all([
      api("GET", "/dashboard?window=" + win), loadRuns(), api("GET", "/jobs?state=scheduled&sort=next_fire&limit=7"),
      api("GET", "/jobs?limit=1"), api("GET", "/executors"), api("GET", "/cluster"), api("GET", "/alarms?open=1&limit=1"), loadUtil(),
    ]);
    if (!ctx.isCurrent()) return;
    const now = Date.now();
    const bucketMs = dash.bucket_seconds * 1000;
    const long = bucketMs >= 3600000;
    const when = v => long ? fmtDateTime(v).slice(5, 16) : fmtHM(v);
    const buckets = dash.buckets.map(b => ({ t: Date.parse(b.at), b,
      values: { ok: b.succeeded, failed: b.failed, other: b.cancelled + b.skipped } }));
    const rate = dash.buckets.map(b => ({ t: Date.parse(b.at), values: { rate: b.success_rate == null ? null : b.success_rate * 100 }, fin: b.succeeded + b.failed }));
    const lag = dash.buckets.map(b => ({ t: Date.parse(b.at), b,
      values: { p50: b.start_lag.p50 ? b.start_lag.p50.ms : null, p95: b.start_lag.p95 ? b.start_lag.p95.ms : null } }));
    const tot = dash.totals;

    // The window the figures are of, truthfully: the rollup is complete up
    // to complete_until, and the window ends there.
    rangeNote.dataset.from = dash.from;
    rangeNote.dataset.to = dash.to;
    rangeNote.dataset.window = dash.window;
    rangeNote.textContent = dash.complete_until
      ? t("dash.range", { from: fmtDateTime(dash.from).slice(0, 16), to: fmtDateTime(dash.to).slice(0, 16), upTo: fmtHM(dash.complete_until) })
      : t("dash.rangeNone");

    const online = execs.executors.filter(e => e.state === "online");
    const members = cl.members || [];
    const finished = tot.succeeded + tot.failed;
    fill(stats,
      stat("runs", t("dash.stat.runs"), fmtNum(tot.started), t("dash.stat.runsSub", { ended: fmtNum(finished + tot.cancelled + tot.skipped) })),
      stat("rate", t("dash.stat.rate"), finished ? fmtPct(tot.success_rate) : "—", t("dash.stat.rateSub", { ok: fmtNum(tot.succeeded), n: fmtNum(finished) }),
        !finished ? null : tot.success_rate >= 0.99 ? "good" : tot.success_rate >= 0.9 ? "warn" : "bad"),
      stat("failed", t("dash.stat.failed"), fmtNum(tot.failed), h("a", { href: "#/failures", class: "link" }, t("dash.stat.failedSub")), tot.failed ? "bad" : null),
      stat("lag", t("dash.stat.lag"), lagText(tot.start_lag.p95), t("dash.stat.lagSub", { p50: lagText(tot.start_lag.p50), p99: lagText(tot.start_lag.p99) }), null, t("dash.lagSub")),
      stat("executors", t("dash.stat.executors"), `${online.length} / ${execs.executors.filter(e => e.state !== "gone").length}`,
        t("dash.stat.executorsSub", { cap: fmtNum(online.reduce((a, e) => a + e.capacity, 0)) }), online.length ? null : "bad"),
      stat("leader", t("dash.stat.leader"), cl.leader.holder || "—", t("dash.stat.leaderSub", { epoch: cl.leader.epoch, n: members.length || "—" })));

    runsTitle.textContent = t("dash.runsPer." + dash.window);
    const span = b => `${when(b.t)} – ${fmtHM(b.t + bucketMs)}`;
    stackedBars(runsChart, buckets, runSeries, {
      height: 220, label: runsTitle.textContent, xFormat: when, xLabelWidth: long ? 90 : 70,
      tip: b => h("div", { class: "tip-body" },
        h("div", { class: "tip-title" }, span(b)),
        runSeries.map(se => h("div", { class: "tip-row" }, h("span", { class: ["swatch", se.cls] }), se.label, h("b", {}, fmtNum(b.values[se.key])))),
        h("div", { class: "tip-row" }, t("dash.startedRuns"), h("b", {}, fmtNum(b.b.started)))),
    });
    runsChart.dataset.ended = buckets.reduce((n, b) => n + b.values.ok + b.values.failed + b.values.other, 0);
    lines(rateChart, rate, [{ key: "rate", label: t("dash.rate"), cls: "c-ok" }], {
      height: 180, yMax: 100, area: "rate", yFormat: v => v + "%", xFormat: when, xLabelWidth: long ? 90 : 70,
      tip: b => h("div", { class: "tip-body" }, h("div", { class: "tip-title" }, span(b)),
        h("div", { class: "tip-row" }, t("dash.rate"), h("b", {}, b.values.rate == null ? "—" : b.values.rate.toFixed(1) + "%")),
        h("div", { class: "tip-row" }, t("dash.finishedRuns"), h("b", {}, fmtNum(b.fin)))),
    });
    lines(lagChart, lag, lagSeries, {
      height: 180, yFormat: v => fmtDur(v), minMax: 10, xFormat: when, xLabelWidth: long ? 90 : 70,
      tip: b => h("div", { class: "tip-body" }, h("div", { class: "tip-title" }, span(b)),
        h("div", { class: "tip-row" }, "p50", h("b", {}, lagText(b.b.start_lag.p50))),
        h("div", { class: "tip-row" }, "p95", h("b", {}, lagText(b.b.start_lag.p95))),
        h("div", { class: "tip-row" }, t("dash.lagRuns"), h("b", {}, fmtNum(b.b.start_lag.runs)))),
    });

    drawUtil(utilNow);

    // Per job: runs, failures, success rate, p95 duration and lag.
    // Only the jobs the Jobs page lists: the hidden job of a workflow's
    // inline node ("@<workflow>/<node>", a name outside the name rule of
    // jobs) is part of its workflow, not a job of its own.
    const per = new Map();
    for (const r of runList) {
      if ((r.job_name || "").startsWith("@")) continue;
      const e = per.get(r.job_id) || { id: r.job_id, app: r.app, name: r.job_name, runs: 0, ok: 0, failed: 0, durs: [], lags: [], last: null };
      e.runs++;
      const c = classify(r.status);
      if (c === "ok") e.ok++; else if (c === "failed") e.failed++;
      if (r.started_at && r.finished_at) e.durs.push(Date.parse(r.finished_at) - Date.parse(r.started_at));
      const lg = startLag(r, Date.now());
      if (lg !== null) e.lags.push(lg);
      if (Date.parse(r.scheduled_at) <= now && (!e.last || Date.parse(r.scheduled_at) > Date.parse(e.last.scheduled_at))) e.last = r;
      per.set(r.job_id, e);
    }
    const perList = [...per.values()].sort((a, b) => b.failed - a.failed || b.runs - a.runs).slice(0, 10);
    syncTable(perJob, perList, e => e.id, [
      { sig: e => e.name, cell: e => h("a", { href: "#/jobs/" + e.id, class: "cell-title" }, h("span", { class: "app-tag" }, e.app), h("span", { class: "job-name" }, e.name || t("common.jobN", { id: e.id }))) },
      { class: "num", cell: e => fmtNum(e.runs) },
      { class: "num", cell: e => h("span", { class: e.failed ? "text-bad" : "" }, fmtNum(e.failed)) },
      { cell: e => { const fin = e.ok + e.failed; return fin ? rateBar(e.ok / fin) : h("span", { class: "muted" }, "—"); } },
      { class: "num", cell: e => fmtDur(quantile(e.durs.sort((a, c) => a - c), 0.95)) },
      { class: "num", cell: e => fmtDur(quantile(e.lags.sort((a, c) => a - c), 0.95)) },
      { cell: e => e.last ? h("a", { href: "#/runs/" + e.last.id, class: "last-run" }, badge(e.last.status, "badge-sm"), relTime(e.last.scheduled_at)) : "—" },
    ]);
    if (!perList.length) fill(perJob, h("tr", {}, h("td", { colspan: 7 }, emptyState(t("dash.noRuns")))));

    // Upcoming firings.
    const next = nextJobs.jobs.filter(j => j.next_fire_at);
    fill(upcoming, ...(next.length ? next.map(j => h("a", { class: "list-row", href: "#/jobs/" + j.id },
      h("div", { class: "list-main" }, h("div", { class: "list-title" }, j.name), h("div", { class: "list-sub mono" }, `${j.app} · ${j.cron} · ${j.time_zone}`)),
      h("div", { class: "list-side" }, relTime(j.next_fire_at), h("div", { class: "list-sub" }, fmtDateTime(j.next_fire_at)))))
      : [emptyState(t("dash.noUpcoming"))]));

    // Recent failures.
    // The latest failures first: by when they ended, not by run id.
    const ended = r => Date.parse(r.finished_at || r.scheduled_at);
    const fails = runList.filter(r => classify(r.status) === "failed").sort((a, b) => ended(b) - ended(a) || b.id - a.id).slice(0, 6);
    fill(recentFail, ...(fails.length ? fails.map(r => h("a", { class: "list-row", href: "#/runs/" + r.id },
      h("div", { class: "list-main" }, h("div", { class: "list-title" }, `#${r.id} · `, runJobName(r)),
        h("div", { class: "list-sub ellipsis" }, errText(r) || t("dash.slotsFailed", { n: r.slots_failed, total: r.slots }))),
      h("div", { class: "list-side" }, badge(r.status), relTime(r.finished_at || r.scheduled_at)))) : [emptyState(t("dash.noFailures"), t("dash.noFailuresSub"))]));

    // Cluster summary.
    const byApp = new Map();
    for (const e of execs.executors) {
      if (e.state === "gone") continue;
      const a = byApp.get(e.app) || { online: 0, total: 0, cap: 0, busy: 0, queued: 0, waits: [] };
      a.total++;
      if (e.state === "online") { a.online++; a.cap += e.capacity; a.busy += (e.active || 0) - (e.queued || 0); a.queued += e.queued || 0; }
      byApp.set(e.app, a);
    }
    for (const r of runList) {
      const a = byApp.get(r.app);
      const q = queueOf(r);
      if (a && q !== null) a.waits.push(q);
    }
    const openAlarms = al.matching_alarms; // alarms nobody resolved (GET /alarms counts them)
    fill(clusterBox, 
      h("div", { class: "leader-line" }, h("span", { class: "leader-crown" }, "★"),
        h("div", {}, h("div", { class: "list-title" }, cl.leader.holder || "—"),
          h("div", { class: "list-sub" }, t("cluster.epochSince", { epoch: cl.leader.epoch }), " ", relTime(cl.leader.since)))),
      h("div", { class: "mini-stats" },
        h("div", {}, h("b", {}, fmtNum(members.length || 0)), h("span", {}, t("dash.replicas"))),
        h("div", {}, h("b", {}, jobTotal.count === undefined ? "—" : fmtNum(jobTotal.count) + (jobTotal.count_exact ? "" : "+")), h("span", {}, t("dash.jobs"))),
        h("div", {}, h("b", { class: openAlarms ? "text-bad" : "" }, fmtNum(openAlarms)), h("a", { href: "#/alarms", class: "link" }, t("dash.alarms")))),
      byApp.size ? h("div", { class: "table-wrap" }, h("table", { class: "table table-compact" },
        h("thead", {}, h("tr", {}, h("th", {}, t("col.app")), h("th", { class: "num" }, t("dash.online")), h("th", { class: "num" }, t("col.capacity")),
          h("th", { title: t("dash.utilTip") }, t("dash.util")), h("th", { class: "num", title: t("dash.queuedTip") }, t("dash.queued")), h("th", { class: "num", title: t("dash.queueWaitTip") }, t("dash.queueWait")))),
        h("tbody", { id: "dash-apps" }, [...byApp].map(([app, a]) => h("tr", { dataset: { app } }, h("td", {}, app),
          h("td", { class: "num" }, pill(`${a.online}/${a.total}`, a.online === a.total ? "ok" : a.online ? "warn" : "bad")),
          h("td", { class: "num" }, fmtNum(a.cap)),
          h("td", { class: "util-cell" }, utilBar(Math.max(0, a.busy), a.cap)),
          h("td", { class: "num" }, fmtNum(a.queued)),
          h("td", { class: "num" }, fmtDur(quantile(a.waits.sort((x, y) => x - y), 0.95)))))))) : emptyState(t("exec.none")));
  }

  return { refresh, interval: () => 5000 };
}
