// shardjob console: boot, login, navigation, hash routing and the live
// refresh loop. Pages live in ./pages/; each exports mount(root, ctx)
// returning { refresh(), interval(), unmount() }.
import { api, onUnauthorized, can, ApiError } from "./api.js";
import { loadI18n, t, tOr, setLang, getLang, onLocaleChange, isUTC, setUTC, fmtTime } from "./i18n.js";
import { h, tickTimes, hideTip, toast, emptyState, button, fill } from "./dom.js";
import dashboard from "./pages/dashboard.js";
import jobs from "./pages/jobs.js";
import jobForm from "./pages/jobform.js";
import jobDetail from "./pages/jobdetail.js";
import runs from "./pages/runs.js";
import runDetail from "./pages/rundetail.js";
import failures from "./pages/failures.js";
import dead from "./pages/dead.js";
import executors from "./pages/executors.js";
import apps from "./pages/apps.js";
import queue from "./pages/queue.js";
import alarms from "./pages/alarms.js";
import cluster from "./pages/cluster.js";
import users from "./pages/users.js";
import tokens from "./pages/tokens.js";
import audit from "./pages/audit.js";
import calendars from "./pages/calendars.js";
import workflows from "./pages/workflows.js";
import workflowForm from "./pages/workflowform.js";
import { passwordDialog } from "./pages/password.js";

const routes = [
  { re: /^dashboard$/, page: dashboard, nav: "dashboard" },
  { re: /^jobs$/, page: jobs, nav: "jobs" },
  { re: /^jobs\/new$/, page: jobForm, nav: "jobs", keys: [] },
  { re: /^jobs\/(\d+)$/, page: jobDetail, nav: "jobs", keys: ["id"] },
  { re: /^jobs\/(\d+)\/edit$/, page: jobForm, nav: "jobs", keys: ["id"] },
  { re: /^runs$/, page: runs, nav: "runs" },
  { re: /^runs\/(\d+)$/, page: runDetail, nav: "runs", keys: ["id"] },
  { re: /^failures$/, page: failures, nav: "failures" },
  { re: /^dead$/, page: dead, nav: "dead" },
  { re: /^executors$/, page: executors, nav: "executors" },
  { re: /^apps$/, page: apps, nav: "apps" },
  { re: /^queue$/, page: queue, nav: "queue" },
  { re: /^alarms$/, page: alarms, nav: "alarms" },
  { re: /^cluster$/, page: cluster, nav: "cluster" },
  { re: /^users$/, page: users, nav: "users" },
  { re: /^tokens$/, page: tokens, nav: "tokens" },
  { re: /^audit$/, page: audit, nav: "audit" },
  { re: /^workflows$/, page: workflows, nav: "workflows" },
  { re: /^workflows\/new$/, page: workflowForm, nav: "workflows", keys: [] },
  { re: /^workflows\/(\d+)$/, page: workflows, nav: "workflows", keys: ["id"] },
  { re: /^workflows\/(\d+)\/edit$/, page: workflowForm, nav: "workflows", keys: ["id"] },
  { re: /^calendars$/, page: calendars, nav: "calendars" },
  { re: /^calendars\/(\d+)$/, page: calendars, nav: "calendars", keys: ["id"] },
];
// Nav entries with the least role that sees them (the API checks anyway).
// API tokens are personal, like the password: they live in the user menu.
const navItems = [["dashboard"], ["jobs"], ["workflows"], ["runs"], ["failures"], ["executors"], ["apps"], ["queue"], ["alarms"], ["dead"], ["calendars"], ["cluster"],
  ["audit", "operator"], ["users", "admin"]];

const $ = id => document.getElementById(id);
let me = null;
let current = null; // { page instance, gen }
let gen = 0;
let timer = null;
let lastOK = 0;

function parseHash() {
  const raw = location.hash.replace(/^#\/?/, "");
  const [path, query] = raw.split("?");
  return { path: path || "dashboard", query: new URLSearchParams(query || "") };
}

function renderNav(active) {
  fill($("nav-more-list"));
  fill($("nav"), ...navItems.filter(([, need]) => !need || (me && can(me.role, need))).map(([n]) => h("a", { href: "#/" + n, class: ["nav-link", n === active && "active"], dataset: { nav: n } }, t("nav." + n))));
  $("nav-more-toggle").textContent = t("nav.more") + " ▾";
  $("logout").textContent = t("nav.logout");
  $("change-password").textContent = t("nav.password");
  $("user-tokens").textContent = t("nav.tokens");
  $("user-tokens").classList.toggle("active", active === "tokens");
  $("theme-label").textContent = t("theme.label");
  for (const o of $("theme-select").options) o.textContent = t("theme." + o.value);
  $("theme-select").value = themeChoice();
  $("change-password").title = t("password.title");
  fill($("who"), h("span", { class: "who-name" }, me ? me.username : ""), me ? h("span", { class: ["role", "role-" + me.role] }, tOr("role." + me.role, me.role)) : null);
  $("lang-select").value = getLang();
  $("lang-select").setAttribute("aria-label", t("nav.language"));
  $("utc-toggle").checked = isUTC();
  $("utc-toggle").parentElement.title = t("nav.utcHint");
  fitNav(); // last: after everything else in the bar has its text
}

/**
 * fitNav moves the menu entries that do not fit the top bar (narrow
 * windows) into the "More" menu after it, last ones first, and back when
 * there is room again: every page stays one click away, with no hidden
 * scrolling. It runs whenever the room changes (watchNav): the window's
 * width, and the right side of the bar, whose texts (the live indicator's
 * time, the user and role, the language) arrive after the entries.
 */
function fitNav() {
  const nav = $("nav"), more = $("nav-more"), list = $("nav-more-list");
  for (const a of [...list.children]) { a.classList.remove("menu-item"); a.classList.add("nav-link"); nav.append(a); }
  more.hidden = true;
  const moved = [];
  while (nav.scrollWidth > nav.clientWidth + 1 && nav.children.length > 1) {
    more.hidden = false; // takes room too: measured again
    moved.unshift(nav.lastElementChild);
    nav.lastElementChild.remove();
  }
  for (const a of moved) { a.classList.remove("nav-link"); a.classList.add("menu-item"); }
  list.append(...moved);
  if (more.hidden) more.open = false;
  $("nav-more-toggle").classList.toggle("active", moved.some(a => a.classList.contains("active")));
}

/**
 * watchNav fits the menu again (once a frame at most) whenever the bar or
 * its right side changes size, and once the fonts are in: a measure taken
 * before a text or a font arrived would leave entries cut off with no
 * "More" menu.
 */
function watchNav() {
  let fitting = 0;
  const refit = () => { cancelAnimationFrame(fitting); fitting = requestAnimationFrame(() => { if (me) fitNav(); }); };
  const ro = new ResizeObserver(refit);
  ro.observe(document.querySelector(".topbar"));
  ro.observe(document.querySelector(".topbar-right"));
  ro.observe(document.querySelector(".brand"));
  if (document.fonts) document.fonts.ready.then(refit);
}

// Theme: "auto" (the default) follows the system's light or dark setting,
// also when it changes; "light" and "dark" are the user's choice, kept in
// this browser.
const darkQuery = window.matchMedia ? window.matchMedia("(prefers-color-scheme: dark)") : null;
function themeChoice() {
  try { return localStorage.getItem("sj_theme") || "auto"; } catch { return "auto"; }
}
function applyTheme() {
  const c = themeChoice();
  const dark = c === "dark" || (c === "auto" && darkQuery && darkQuery.matches);
  document.documentElement.dataset.theme = dark ? "dark" : "light";
}

function setLive(state) {
  const live = $("live");
  live.dataset.state = state;
  $("live-text").textContent = state === "ok" ? t("live.updated", { time: fmtTime(lastOK) }) : state === "paused" ? t("live.paused") : t("live.error");
}

function schedule(g) {
  clearTimeout(timer);
  if (!current || g !== gen) return;
  const ms = current.inst.interval ? current.inst.interval() : 5000;
  if (!ms) return;
  timer = setTimeout(() => refresh(g), ms);
}

async function refresh(g, first) {
  if (!current || g !== gen) return;
  if (document.visibilityState === "hidden" && !first) { setLive("paused"); return; }
  try {
    await current.inst.refresh();
    if (g !== gen) return;
    lastOK = Date.now();
    setLive("ok");
    current.root.classList.remove("is-loading");
  } catch (e) {
    if (g !== gen) return;
    if (e instanceof ApiError && e.status === 401) return; // login shown
    setLive("error");
    if (first) {
      current.root.classList.remove("is-loading");
      fill(current.root, h("div", { class: "page-error" },
        emptyState(e.status === 404 ? t("error.notFound") : t("error.loadFailed"), e.message),
        button(t("common.back"), { onclick: () => history.back(), icon: "back" })));
      return;
    }
  }
  schedule(g);
}

function route() {
  if (!me) return;
  const { path, query } = parseHash();
  const r = routes.find(x => x.re.test(path));
  if (!r) { location.hash = "#/dashboard"; return; }
  const m = path.match(r.re);
  const params = {};
  (r.keys || []).forEach((k, i) => { params[k] = m[i + 1]; });
  if (current && current.inst.unmount) current.inst.unmount();
  hideTip();
  gen++;
  const g = gen;
  clearTimeout(timer);
  renderNav(r.nav);
  const root = h("div", { class: ["page", "page-" + r.nav, "is-loading"] });
  fill($("view"), root);
  window.scrollTo(0, 0);
  const ctx = {
    params, query, me,
    can: need => can(me.role, need),
    navigate: hash => { location.hash = hash; },
    refreshNow: () => refresh(g),
    isCurrent: () => g === gen,
  };
  const inst = r.page(root, ctx) || {};
  current = { inst, root, gen: g };
  document.title = t("nav." + r.nav) + " · shardjob";
  refresh(g, true);
}

// ssoInfo is how people sign in here (GET /sso), asked once.
let ssoInfo = null;

// ssoError takes the reason of a refused single sign-on that the admin
// sent the browser back with (?sso_error=), and removes it from the URL.
function ssoError() {
  const params = new URLSearchParams(location.search);
  const text = params.get("sso_error");
  if (text === null) return "";
  history.replaceState(null, "", location.pathname + location.hash);
  return text;
}

// ssoChoices fills box with the single sign-on buttons and hints of this
// platform: "Sign in with <provider>" for OIDC (coming back to the page
// shown now), and a note that the form takes LDAP accounts.
async function ssoChoices(box) {
  try {
    if (!ssoInfo) ssoInfo = await api("GET", "/sso");
  } catch { return; /* the form still works */ }
  const parts = [];
  if (ssoInfo.oidc) {
    const back = "/" + (location.hash || "");
    parts.push(h("a", { id: "sso-oidc", class: "btn btn-block sso-btn", href: ssoInfo.oidc.login_url + "?return=" + encodeURIComponent(back) },
      t("login.sso", { name: ssoInfo.oidc.name })));
  }
  if (ssoInfo.ldap) parts.push(h("p", { class: "login-hint", id: "sso-ldap-hint" }, t("login.ldap_hint")));
  if (!ssoInfo.password && !ssoInfo.ldap) parts.push(h("p", { class: "login-hint" }, t("login.password_off")));
  fill(box, ...parts);
}

function showLogin(message) {
  message = ssoError() || message;
  me = null;
  gen++;
  clearTimeout(timer);
  if (current && current.inst.unmount) current.inst.unmount();
  current = null;
  $("boot").hidden = true;
  $("app-view").hidden = true;
  fill($("toasts"));
  hideTip();
  const view = $("login-view");
  const err = h("p", { class: "login-error", id: "login-error", role: "alert" }, message || "");
  const user = h("input", { name: "username", id: "login-user", autocomplete: "username", required: true, autofocus: true });
  const pass = h("input", { name: "password", id: "login-pass", type: "password", autocomplete: "current-password", required: true });
  const submit = h("button", { type: "submit", class: "btn btn-primary btn-block", id: "login-submit" }, t("login.submit"));
  const form = h("form", { id: "login-form", class: "login-form" },
    h("label", { class: "field" }, h("span", { class: "field-label" }, t("login.username")), user),
    h("label", { class: "field" }, h("span", { class: "field-label" }, t("login.password")), pass),
    err, submit);
  form.addEventListener("submit", async ev => {
    ev.preventDefault();
    submit.disabled = true;
    err.textContent = "";
    try {
      await api("POST", "/login", { username: user.value, password: pass.value });
      await start();
    } catch (e) {
      err.textContent = e.status === 401 ? t("login.wrong") : e.message;
      pass.select();
    } finally { submit.disabled = false; }
  });
  const sso = h("div", { class: "login-sso", id: "login-sso" });
  ssoChoices(sso);
  const langs = h("div", { class: "login-langs" }, [["en", "English"], ["zh-CN", "简体中文"]].map(([l, label]) =>
    h("button", { type: "button", class: ["link-btn", getLang() === l && "active"], onclick: () => { setLang(l); showLogin(err.textContent); } }, label)));
  fill(view, h("div", { class: "login-card" },
    h("div", { class: "login-brand" },
      h("img", { src: "/ui/favicon.svg", alt: "", class: "login-logo" }),
      h("div", {}, h("div", { class: "login-title" }, "shardjob"), h("div", { class: "login-sub" }, t("login.tagline")))),
    h("h1", { class: "login-h" }, t("login.title")),
    sso, form, langs),
    h("p", { class: "login-foot" }, t("login.foot")));
  document.title = t("login.title") + " · shardjob";
  view.hidden = false;
  user.focus();
}

async function start() {
  try {
    me = await api("GET", "/me");
  } catch (e) {
    if (e.status === 401) return showLogin(e.message.startsWith("access of ") ? e.message : undefined);
    $("boot").hidden = true;
    return showLogin(e.message);
  }
  $("boot").hidden = true;
  $("login-view").hidden = true;
  $("app-view").hidden = false;
  $("change-password").hidden = me.source !== "local"; // directory users change it in their directory
  if (!location.hash || location.hash === "#" || location.hash === "#/") history.replaceState(null, "", "#/dashboard");
  route();
}

async function boot() {
  applyTheme();
  if (darkQuery) darkQuery.addEventListener("change", applyTheme);
  await loadI18n();
  // A directory user whose access ended is told why (the admin's reason),
  // anyone else that the session ended.
  onUnauthorized(err => {
    const why = err.message.startsWith("access of ") ? err.message : "";
    if (me) { showLogin(why || t("login.expired")); return; }
    // Requests in flight answer after the first 401: the one that carries
    // the reason (the recheck that ended the access) wins over "session
    // ended", in whichever order they come.
    const box = document.getElementById("login-error");
    if (why && box) box.textContent = why;
  });
  $("logout").addEventListener("click", async () => {
    const r = await api("POST", "/logout").catch(() => ({}));
    if (r.logout_url) { location.href = r.logout_url; return; } // the OIDC provider ends its session too
    showLogin();
  });
  watchNav();
  // Menus close on a choice or a click elsewhere.
  document.addEventListener("click", ev => {
    for (const id of ["nav-more", "user-menu"]) {
      const m = $(id);
      if (m.open && (!m.contains(ev.target) || ev.target.closest("a, button.menu-item"))) m.open = false;
    }
  });
  $("theme-select").addEventListener("change", ev => {
    try { localStorage.setItem("sj_theme", ev.target.value); } catch { /* private mode: this page only */ }
    applyTheme();
  });
  $("change-password").addEventListener("click", async () => {
    if (!(await passwordDialog())) return;
    showLogin(t("password.changed"));
  });
  $("lang-select").addEventListener("change", ev => { setLang(ev.target.value); });
  $("utc-toggle").addEventListener("change", ev => { setUTC(ev.target.checked); });
  onLocaleChange(() => { if (me) route(); });
  window.addEventListener("hashchange", route);
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible" && current) refresh(gen);
  });
  setInterval(() => tickTimes(), 1000);
  window.addEventListener("unhandledrejection", ev => {
    const e = ev.reason;
    if (e instanceof ApiError && e.status === 401) { ev.preventDefault(); return; }
    if (e instanceof ApiError) { ev.preventDefault(); toast(e.message, "error"); }
  });
  await start();
}

boot();
