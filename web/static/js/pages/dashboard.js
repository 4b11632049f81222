// Dashboard: runs over the chosen window drawn as charts (firings and
// failures per bucket, success rate, fire lag), executor utilization per
// app over its own window (the leader's samples), executors, leader and
// replicas, upcoming firings and recent failures. Built from /runs, /jobs,
// /executors, /cluster, /alarms (the count of open alarms) and /stats/utilization.
import { api, allJobs, runsSince } from "../api.js";
import { t, fmtDur, fmtNum, fmtPct, fmtDateTime, fmtHM, errText } from "../i18n.js";
import { h, card, pageHead, badge, relTime, emptyState, pill, fill, syncTable } from "../dom.js";
import { stackedBars, lines, legend } from "../charts.js";
import { startLag } from "../lag.js";
import { runJobName } from "./jobdetail.js";

const WINDOWS = [["15m", 15], ["1h", 60], ["3h", 180], ["6h", 360]];
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
  const cache = new Map(); // run id → run
  let loadedFor = null;
  let refreshes = 0;

  const seg = segmented("dash-window", WINDOWS, win, "dash.window.", k => { win = savedWindow = k; ctx.refreshNow(); });
  let utilWin = savedUtilWindow;
  let util = null; // the last answer of /stats/utilization, for utilWin
  const utilSeg = segmented("util-window", UTIL_WINDOWS, utilWin, "dash.utilWindow.", k => { utilWin = savedUtilWindow = k; util = null; ctx.refreshNow(); });
  const utilChart = h("div", { class: "chart-box", id: "chart-util" });
  const utilLegend = h("div", { id: "util-legend" });

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
    { key: "active", label: t("dash.series.active"), cls: "c-run" },
    { key: "other", label: t("dash.series.other"), cls: "c-other" },
  ];
  const lagSeries = [
    { key: "p50", label: "p50", cls: "c-p50" },
    { key: "p95", label: "p95", cls: "c-p95" },
    { key: "queue", label: t("dash.queueP95"), cls: "c-queue" },
  ];

  root.append(
    pageHead(t("dash.title"), t("dash.sub"), seg),
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

  async function loadRuns(windowMs) {
    const since = Date.now() - windowMs;
    if (loadedFor !== win || refreshes % 12 === 0) {
      cache.clear();
      for (const r of await runsSince(since)) cache.set(r.id, r);
      loadedFor = win;
    } else {
      const { runs } = await api("GET", "/runs?limit=500");
      for (const r of runs) cache.set(r.id, r);
    }
    for (const [id, r] of cache) if (Date.parse(r.scheduled_at) < since) cache.delete(id);
    return [...cache.values()];
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
    const minutes = WINDOWS.find(w => w[0] === win)[1];
    const windowMs = minutes * 60000;
    const [runList, jobs, execs, cl, al, utilNow] = await Promise.all([
      loadRuns(windowMs), allJobs(), api("GET", "/executors"), api("GET", "/cluster"), api("GET", "/alarms?open=1&limit=1"), loadUtil(),
    ]);
    refreshes++;
    if (!ctx.isCurrent()) return;
    const now = Date.now();
    const bucketMs = minutes <= 60 ? 60000 : 300000;
    const start = Math.floor((now - windowMs) / bucketMs) * bucketMs + bucketMs;
    const n = Math.floor((now - start) / bucketMs) + 1;
    const buckets = Array.from({ length: n }, (_, i) => ({ t: start + i * bucketMs, values: { ok: 0, failed: 0, active: 0, other: 0 }, lags: [], queues: [] }));
    let ok = 0, failed = 0, active = 0, total = 0;
    const allLags = [];
    for (const r of runList) {
      const at = Date.parse(r.scheduled_at);
      const i = Math.floor((at - start) / bucketMs);
      const c = classify(r.status);
      total++;
      if (c === "ok") ok++; else if (c === "failed") failed++; else if (c === "active") active++;
      if (i < 0 || i >= n) continue;
      buckets[i].values[c]++;
      const lag = startLag(r, Date.now());
      if (lag !== null && r.trigger !== "retry") { buckets[i].lags.push(lag); allLags.push(lag); }
      const q = queueOf(r);
      if (q !== null && r.trigger !== "retry") buckets[i].queues.push(q);
    }
    const rate = buckets.map(b => {
      const fin = b.values.ok + b.values.failed;
      return { t: b.t, values: { rate: fin ? (b.values.ok / fin) * 100 : null }, fin };
    });
    const lag = buckets.map(b => {
      const sorted = b.lags.slice().sort((a, c) => a - c);
      const queues = b.queues.slice().sort((a, c) => a - c);
      return { t: b.t, values: { p50: quantile(sorted, 0.5), p95: quantile(sorted, 0.95), queue: quantile(queues, 0.95) }, count: sorted.length };
    });
    allLags.sort((a, c) => a - c);

    const online = execs.executors.filter(e => e.state === "online");
    const members = cl.members || [];
    const finished = ok + failed;
    fill(stats, 
      stat("runs", t("dash.stat.runs"), fmtNum(total), t("dash.stat.runsSub", { active: fmtNum(active) })),
      stat("rate", t("dash.stat.rate"), finished ? fmtPct(ok / finished) : "—", t("dash.stat.rateSub", { ok: fmtNum(ok), n: fmtNum(finished) }),
        !finished ? null : ok / finished >= 0.99 ? "good" : ok / finished >= 0.9 ? "warn" : "bad"),
      stat("failed", t("dash.stat.failed"), fmtNum(failed), h("a", { href: "#/failures", class: "link" }, t("dash.stat.failedSub")), failed ? "bad" : null),
      stat("lag", t("dash.stat.lag"), allLags.length ? fmtDur(quantile(allLags, 0.95)) : "—", t("dash.stat.lagSub", { p50: allLags.length ? fmtDur(quantile(allLags, 0.5)) : "—" }), null, t("dash.lagSub")),
      stat("executors", t("dash.stat.executors"), `${online.length} / ${execs.executors.filter(e => e.state !== "gone").length}`,
        t("dash.stat.executorsSub", { cap: fmtNum(online.reduce((a, e) => a + e.capacity, 0)) }), online.length ? null : "bad"),
      stat("leader", t("dash.stat.leader"), cl.leader.holder || "—", t("dash.stat.leaderSub", { epoch: cl.leader.epoch, n: members.length || "—" })));

    runsTitle.textContent = bucketMs === 60000 ? t("dash.runsPerMinute") : t("dash.runsPer5Minutes");
    stackedBars(runsChart, buckets, runSeries, {
      height: 220, label: runsTitle.textContent,
      tip: b => h("div", { class: "tip-body" },
        h("div", { class: "tip-title" }, `${fmtHM(b.t)} – ${fmtHM(b.t + bucketMs)}`),
        runSeries.map(se => h("div", { class: "tip-row" }, h("span", { class: ["swatch", se.cls] }), se.label, h("b", {}, fmtNum(b.values[se.key]))))),
    });
    lines(rateChart, rate, [{ key: "rate", label: t("dash.rate"), cls: "c-ok" }], {
      height: 180, yMax: 100, area: "rate", yFormat: v => v + "%",
      tip: b => h("div", { class: "tip-body" }, h("div", { class: "tip-title" }, fmtHM(b.t)),
        h("div", { class: "tip-row" }, t("dash.rate"), h("b", {}, b.values.rate == null ? "—" : b.values.rate.toFixed(1) + "%")),
        h("div", { class: "tip-row" }, t("dash.finishedRuns"), h("b", {}, fmtNum(b.fin)))),
    });
    lines(lagChart, lag, lagSeries, {
      height: 180, yFormat: v => fmtDur(v), minMax: 10,
      tip: b => h("div", { class: "tip-body" }, h("div", { class: "tip-title" }, fmtHM(b.t)),
        h("div", { class: "tip-row" }, "p50", h("b", {}, fmtDur(b.values.p50))),
        h("div", { class: "tip-row" }, "p95", h("b", {}, fmtDur(b.values.p95))),
        h("div", { class: "tip-row" }, t("dash.queueP95"), h("b", {}, fmtDur(b.values.queue))),
        h("div", { class: "tip-row" }, t("dash.startedRuns"), h("b", {}, fmtNum(b.count)))),
    });

    drawUtil(utilNow);

    // Per job: runs, failures, success rate, p95 duration and lag.
    // Only the jobs the Jobs page lists (and deleted ones, which their runs
    // still name): the hidden job of a workflow's inline node is part of
    // its workflow, not a job of its own.
    const jobName = new Map(jobs.map(j => [j.id, j]));
    const per = new Map();
    for (const r of runList) {
      if (!jobName.has(r.job_id) && !r.job_deleted) continue;
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
      { sig: e => e.name, cell: e => h("a", { href: "#/jobs/" + e.id, class: "cell-title" }, h("span", { class: "app-tag" }, e.app), h("span", { class: "job-name" }, jobName.get(e.id)?.name || e.name || t("common.jobN", { id: e.id }))) },
      { class: "num", cell: e => fmtNum(e.runs) },
      { class: "num", cell: e => h("span", { class: e.failed ? "text-bad" : "" }, fmtNum(e.failed)) },
      { cell: e => { const fin = e.ok + e.failed; return fin ? rateBar(e.ok / fin) : h("span", { class: "muted" }, "—"); } },
      { class: "num", cell: e => fmtDur(quantile(e.durs.sort((a, c) => a - c), 0.95)) },
      { class: "num", cell: e => fmtDur(quantile(e.lags.sort((a, c) => a - c), 0.95)) },
      { cell: e => e.last ? h("a", { href: "#/runs/" + e.last.id, class: "last-run" }, badge(e.last.status, "badge-sm"), relTime(e.last.scheduled_at)) : "—" },
    ]);
    if (!perList.length) fill(perJob, h("tr", {}, h("td", { colspan: 7 }, emptyState(t("dash.noRuns")))));

    // Upcoming firings.
    const next = jobs.filter(j => j.enabled && !j.paused && j.next_fire_at)
      .sort((a, b) => Date.parse(a.next_fire_at) - Date.parse(b.next_fire_at)).slice(0, 7);
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
        h("div", {}, h("b", {}, fmtNum(jobs.length)), h("span", {}, t("dash.jobs"))),
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
