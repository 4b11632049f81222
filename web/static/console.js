// shardjob console: a small client of the /api/v1 JSON API.
"use strict";

function csrf() {
  const m = document.cookie.match(/(?:^|; )sj_csrf=([^;]*)/);
  return m ? decodeURIComponent(m[1]) : "";
}

async function api(method, path, body) {
  const opts = { method, headers: { "X-CSRF-Token": csrf() }, credentials: "same-origin" };
  if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  const res = await fetch("/api/v1" + path, opts);
  const data = await res.json().catch(() => ({}));
  if (!res.ok) { const e = new Error(data.error || res.statusText); e.status = res.status; throw e; }
  return data;
}

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  for (const k of kids) e.append(k instanceof Node ? k : document.createTextNode(k == null ? "" : String(k)));
  return e;
}

function table(headers, rows) {
  return el("table", {}, el("thead", {}, el("tr", {}, ...headers.map(h => el("th", {}, h)))),
    el("tbody", {}, ...rows.map(r => el("tr", {}, ...r.map(c => c instanceof Node ? el("td", {}, c) : el("td", {}, c))))));
}

const views = {
  async jobs() {
    const { jobs } = await api("GET", "/jobs");
    return table(["ID", "App", "Name", "Handler", "Cron", "Zone", "Slots", "Enabled", "Next fire"],
      jobs.map(j => [j.id, j.app, j.name, j.handler, j.cron, j.time_zone, j.slots, j.enabled ? "yes" : "no", j.next_fire_at || "—"]));
  },
  async runs() {
    const { runs } = await api("GET", "/runs?limit=100");
    return table(["ID", "Job", "Scheduled", "Trigger", "Status", "Slots ok/failed/all", "Error"],
      runs.map(r => [r.id, r.job_name, r.scheduled_at, r.trigger, el("span", { class: "status-" + r.status }, r.status),
        `${r.slots_succeeded}/${r.slots_failed}/${r.slots}`, r.error || ""]));
  },
  async executors() {
    const { executors } = await api("GET", "/executors");
    return table(["ID", "App", "Instance", "Address", "Capacity", "State", "Last heartbeat"],
      executors.map(e => [e.id, e.app, e.instance_id, e.address, e.capacity, e.state, e.last_heartbeat]));
  },
  async cluster() {
    const c = await api("GET", "/cluster");
    const rows = (c.members || []).map(m => [m.ID || m.id, m.Address || m.address, (m.Leader || m.leader) ? "leader" : "follower"]);
    return el("div", {}, el("p", {}, `Leader epoch ${c.leader.epoch} held by ${c.leader.holder || "—"} since ${c.leader.since}`),
      table(["Replica", "Address", "Role"], rows));
  },
};

async function render() {
  const name = (location.hash || "#jobs").slice(1);
  const view = document.getElementById("view");
  try {
    const content = await (views[name] || views.jobs)();
    view.replaceChildren(el("h2", {}, name[0].toUpperCase() + name.slice(1)), content);
  } catch (e) {
    if (e.status === 401) return showLogin();
    view.replaceChildren(el("p", { class: "error" }, e.message));
  }
}

function showLogin() {
  document.getElementById("nav").hidden = true;
  document.getElementById("app-view").hidden = true;
  document.getElementById("login-view").hidden = false;
}

async function showApp() {
  try {
    const me = await api("GET", "/me");
    document.getElementById("who").textContent = `${me.username} (${me.role})`;
  } catch (e) { return showLogin(); }
  document.getElementById("login-view").hidden = true;
  document.getElementById("nav").hidden = false;
  document.getElementById("app-view").hidden = false;
  await render();
}

document.getElementById("login-form").addEventListener("submit", async ev => {
  ev.preventDefault();
  const f = new FormData(ev.target);
  try {
    await api("POST", "/login", { username: f.get("username"), password: f.get("password") });
    document.getElementById("login-error").textContent = "";
    await showApp();
  } catch (e) { document.getElementById("login-error").textContent = e.message; }
});
document.getElementById("logout").addEventListener("click", async () => { await api("POST", "/logout").catch(() => {}); showLogin(); });
window.addEventListener("hashchange", render);
setInterval(() => { if (!document.getElementById("app-view").hidden) render(); }, 3000);
showApp();
