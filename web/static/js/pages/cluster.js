// Cluster: the leader record (epoch, holder, since), the admin replicas
// with the scheduling partitions each owns, a map of the partitions
// (owner and epoch of each) and a drawing of replicas and executor apps.
import { api } from "../api.js";
import { t, fmtNum, fmtDur } from "../i18n.js";
import { h, s, pageHead, card, kv, syncTable, absTime, relTime, emptyState, pill, fill } from "../dom.js";

// LATE_MS is the firing lag from which a partition is shown late: its
// earliest due job has waited this long to fire.
const LATE_MS = 2000;

// FIRES_BY_PARTITION is the feature an admin registers when it fires its
// partitions' jobs (ownership.FeatureFireByPartition); an admin of an
// older version registers none and the leader gives it no partitions.
const FIRES_BY_PARTITION = "fire-by-partition";

export default function mount(root, ctx) {
  const leaderBox = h("div", { id: "cluster-leader" });
  const topo = h("div", { class: "topo-box", id: "cluster-topology" });
  const tbody = h("tbody");
  const membersErr = h("div", { class: "callout callout-bad", hidden: true });
  const pmap = h("div", { class: "pmap", id: "partition-map", role: "img" });
  const plegend = h("div", { class: "pmap-legend", id: "partition-legend" });
  const plag = h("p", { class: "muted", id: "partition-lag" });
  root.append(pageHead(t("cluster.title"), t("cluster.sub")),
    h("div", { class: "grid grid-detail" },
      card(t("cluster.leader"), leaderBox),
      card(t("cluster.topology"), topo)),
    card(t("cluster.replicas"), [membersErr, h("div", { class: "table-wrap" }, h("table", { class: "table", id: "members-table" },
      h("thead", {}, h("tr", {}, h("th", {}, t("col.replica")), h("th", {}, t("col.address")), h("th", {}, t("col.role")), h("th", {}, t("col.joined")), h("th", { class: "num" }, t("col.epoch")), h("th", { class: "num" }, t("col.partitions")))),
      tbody))], { flush: true }),
    card(t("cluster.partitions"), [plegend, plag, pmap, h("p", { class: "footnote" }, t("cluster.partitionsNote"))]),
    h("p", { class: "footnote" }, t("cluster.note")));

  function drawTopology(members, execs) {
    const apps = new Map();
    for (const e of execs) {
      if (e.state === "gone") continue;
      const a = apps.get(e.app) || { online: 0, total: 0 };
      a.total++; if (e.state === "online") a.online++;
      apps.set(e.app, a);
    }
    const W = Math.max(320, topo.clientWidth || 520), H = 220;
    const g = s("svg", { class: "chart topo", width: W, height: H, viewBox: `0 0 ${W} ${H}` });
    const ms = members.length ? members : [{ id: "?", leader: false }];
    const appList = [...apps];
    const mx = i => (W / (ms.length + 1)) * (i + 1);
    const ax = i => (W / (appList.length + 1)) * (i + 1);
    const dbY = 110;
    g.append(s("text", { class: "axis", x: 8, y: 14 }, t("cluster.admins")), s("text", { class: "axis", x: 8, y: H - 50 }, t("cluster.execApps")));
    ms.forEach((m, i) => g.append(s("line", { class: "topo-link", x1: mx(i), y1: 48, x2: W / 2, y2: dbY - 14 })));
    appList.forEach((_, i) => g.append(s("line", { class: "topo-link dashed", x1: ax(i), y1: H - 36, x2: W / 2, y2: dbY + 14 })));
    g.append(s("rect", { class: "topo-db", x: W / 2 - 60, y: dbY - 14, width: 120, height: 28, rx: 6 }),
      s("text", { class: "topo-label", x: W / 2, y: dbY + 4, "text-anchor": "middle" }, t("cluster.platformDB")));
    ms.forEach((m, i) => {
      g.append(s("circle", { class: ["topo-node", m.leader && "leader"], cx: mx(i), cy: 36, r: 14 }));
      if (m.leader) g.append(s("text", { class: "topo-star", x: mx(i), y: 41, "text-anchor": "middle" }, "★"));
      g.append(s("text", { class: "topo-label", x: mx(i), y: 66, "text-anchor": "middle" }, String(m.id).slice(0, 18)));
    });
    appList.forEach(([app, a], i) => {
      g.append(s("rect", { class: ["topo-app", a.online === 0 && "bad"], x: ax(i) - 44, y: H - 40, width: 88, height: 26, rx: 13 }),
        s("text", { class: "topo-label", x: ax(i), y: H - 23, "text-anchor": "middle" }, `${app.slice(0, 10)} ${a.online}/${a.total}`));
    });
    if (!appList.length) g.append(s("text", { class: "axis", x: W / 2, y: H - 22, "text-anchor": "middle" }, t("exec.none")));
    fill(topo, g);
  }

  // drawPartitions: one cell per partition, coloured by its owner (the
  // holder of its fencing record), with its number, owner, epoch and
  // firing lag in the cell's title, outlined when its jobs fire late; a
  // legend of owners with their counts and the largest lag.
  function drawPartitions(records, members, maxLag) {
    const holders = [...new Set([...members.map(m => m.id), ...records.map(r => r.holder)])].filter(Boolean).sort();
    const colour = id => "c-app" + (holders.indexOf(id) % 8);
    const counts = new Map();
    for (const r of records) counts.set(r.holder, (counts.get(r.holder) || 0) + 1);
    pmap.setAttribute("aria-label", t("cluster.partitionsAria", { n: fmtNum(records.length), owners: fmtNum(counts.size) }));
    fill(pmap, ...records.map(r => h("span", {
      class: ["pcell", counts.has(r.holder) && colour(r.holder), r.lag_ms >= LATE_MS && "late"],
      title: t("cluster.partitionCell", { p: r.partition, holder: r.holder || "—", epoch: String(r.epoch), lag: fmtDur(r.lag_ms || 0) }),
    })));
    plag.textContent = records.length ? t("cluster.partitionLag", { lag: fmtDur(maxLag || 0) }) : "";
    plag.className = (maxLag || 0) >= LATE_MS ? "callout callout-warn" : "muted";
    if (!records.length) {
      fill(plegend, emptyState(t("cluster.noPartitions")));
      return;
    }
    fill(plegend, ...holders.filter(id => counts.has(id)).map(id =>
      h("span", { class: "pmap-key" }, h("span", { class: ["swatch", colour(id)] }), id, " ", h("span", { class: "muted" }, fmtNum(counts.get(id))))));
  }

  // older: the replica did not register FIRES_BY_PARTITION.
  const older = m => !(m.features || []).includes(FIRES_BY_PARTITION);

  async function refresh() {
    const [c, ex] = await Promise.all([api("GET", "/cluster"), api("GET", "/executors")]);
    if (!ctx.isCurrent()) return;
    const members = c.members || [];
    const parts = c.partitions || {};
    const owned = parts.owned || {};
    fill(leaderBox, 
      h("div", { class: "leader-hero" }, h("span", { class: "leader-crown big" }, "★"),
        h("div", {}, h("div", { class: "leader-name", id: "leader-holder" }, c.leader.holder || "—"),
          h("div", { class: "muted" }, t("cluster.epochSince", { epoch: fmtNum(c.leader.epoch) }), " ", relTime(c.leader.since)))),
      kv([
        [t("col.epoch"), h("span", { class: "mono" }, String(c.leader.epoch))],
        [t("cluster.holder"), c.leader.holder || "—"],
        [t("cluster.since"), absTime(c.leader.since)],
        [t("cluster.tenure"), fmtDur(Date.now() - Date.parse(c.leader.since))],
        [t("cluster.replicaCount"), fmtNum(members.length)],
      ]));
    membersErr.hidden = !c.members_error;
    membersErr.textContent = c.members_error || "";
    syncTable(tbody, members, m => m.id, [
      { class: "mono", sig: m => m.id, cell: m => m.id },
      { class: "mono", sig: m => m.address || "", cell: m => m.address || "—" },
      { sig: m => m.leader, cell: m => m.leader ? pill("★ " + t("cluster.roleLeader"), "ok") : pill(t("cluster.roleFollower")) },
      { sig: m => m.since, cell: m => [absTime(m.since), h("div", { class: "sub-line" }, relTime(m.since))] },
      { class: "num mono", sig: m => m.epoch, cell: m => m.leader ? String(m.epoch) : "—" },
      { class: "num", sig: m => `${owned[m.id] || 0}/${older(m)}`, cell: m => older(m)
        ? [fmtNum(owned[m.id] || 0), h("div", { class: "sub-line" }, h("span", { class: "older-version text-warn", title: t("cluster.olderVersionWhy") }, t("cluster.olderVersion")))]
        : fmtNum(owned[m.id] || 0) },
    ]);
    if (!members.length) fill(tbody, h("tr", {}, h("td", { colspan: 6 }, emptyState(t("cluster.noMembers")))));
    drawPartitions(parts.records || [], members, parts.max_lag_ms);
    drawTopology(members, ex.executors);
  }

  return { refresh, interval: () => 5000 };
}
