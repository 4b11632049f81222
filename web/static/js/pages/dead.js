// Dead letters (docs/failures.md "Dead letters"): the slots that failed
// permanently or used up their retries, newest first, filtered on the
// server (app, job, handler, class; GET /dead) and kept in the URL hash;
// keyset paging with "Load more" and the count of what matches (up to
// 10,000, "more than" beyond). Operators select letters (a row, or every
// loaded row) and replay them (POST /dead/replay): all or none, the
// refused letters named with their reasons.
import { api, qs } from "../api.js";
import { t, fmtNum, errText, fieldTexts } from "../i18n.js";
import { jobPicker } from "./runs.js";
import { classPill } from "./rundetail.js";
import { h, pageHead, syncTable, absTime, relTime, emptyState, button, fill, debounce, confirmDialog, toast } from "../dom.js";

const CLASSES = ["", "permanent", "retryable", "timeout", "lost", "cancelled"];
const PAGE = 100;
const ERR_MAX = 120; // characters of the error shown in the table; all of it on hover

export default function mount(root, ctx) {
  const filter = { app: ctx.query.get("app") || "", job_id: ctx.query.get("job_id") || "", handler: ctx.query.get("handler") || "",
    class: ctx.query.get("class") || "" };
  const op = ctx.can("operator");
  const letters = new Map(); // id → letter, every page loaded
  const selected = new Set();
  let refused = new Set(); // ids the last replay refused
  let next = null; // cursor of the next page; null before the first page
  let total = null; // {count, count_exact} of the first page
  let loaded = false; // the first page of the current filter arrived
  let setup = false;
  let gen = 0; // filter generation: answers to an older filter are dropped

  // Filters: the job (a name search filling the list, as on Runs), the
  // app, the handler (typed) and the error class.
  const { sel: jobSel, find: jobFind, options: jobOptions } = jobPicker("dead", filter);
  const appSel = h("select", { id: "dead-app", "aria-label": t("col.app") }, h("option", { value: "" }, t("jobs.allApps")));
  const classSel = h("select", { id: "dead-class", "aria-label": t("col.errorClass") },
    CLASSES.map(c => h("option", { value: c }, c ? t("errclass." + c) : t("dead.allClasses"))));
  classSel.value = filter.class;
  const handlerBox = h("input", { type: "search", id: "dead-handler", class: "filter-input", placeholder: t("dead.handler"), "aria-label": t("dead.handler"), value: filter.handler });
  const count = h("span", { class: "muted", id: "dead-count" });

  // The bulk bar (operators): what is selected and Replay.
  const pageBox = h("input", { type: "checkbox", id: "dead-select-page", title: t("dead.selectPage"), "aria-label": t("dead.selectPage"), onchange: () => {
    for (const d of list()) pageBox.checked ? selected.add(d.id) : selected.delete(d.id);
    render();
  } });
  const selInfo = h("span", { id: "dead-selection", class: "muted" });
  const replayBtn = button(t("dead.replay"), { id: "dead-replay", kind: "primary", size: "sm", icon: "retry", onclick: () => replay() });
  const bulkBar = op ? h("div", { class: "dead-bulk", id: "dead-bulk" }, selInfo, replayBtn) : null;

  const more = button(t("dead.loadMore"), { id: "dead-more", onclick: async ev => {
    const b = ev.currentTarget;
    b.disabled = true;
    try { await loadMore(); } finally { b.disabled = false; }
  } });
  const tbody = h("tbody");
  const empty = h("div", { hidden: true });
  const table = h("table", { class: "table", id: "dead-table" },
    h("thead", {}, h("tr", {}, op ? h("th", { class: "col-check" }, pageBox) : null,
      h("th", {}, t("dead.diedAt")), h("th", {}, t("col.app")), h("th", {}, t("col.job")), h("th", { class: "num" }, t("col.run")),
      h("th", { class: "num" }, t("col.slot")), h("th", {}, t("col.errorClass")), h("th", {}, t("dead.lastError")),
      h("th", { class: "num" }, t("dead.attempts")), h("th", {}, t("dead.replayed")))),
    tbody);

  root.append(pageHead(t("dead.title"), t("dead.sub")),
    h("div", { class: "card" },
      h("div", { class: "toolbar" }, jobFind, jobSel, appSel, handlerBox, classSel, h("div", { class: "spacer" }), count, bulkBar),
      h("div", { class: "table-wrap" }, table), empty,
      h("div", { class: "table-foot" }, more)));

  // A change of a filter starts the list again from its first page, and
  // is kept in the URL (a reload or a shared link shows the same list).
  const apply = () => {
    history.replaceState(null, "", "#/dead" + qs(filter));
    gen++;
    letters.clear();
    selected.clear();
    refused = new Set();
    next = null;
    total = null;
    loaded = false;
    fill(tbody);
    render();
    ctx.refreshNow();
  };
  jobSel.addEventListener("change", () => { filter.job_id = jobSel.value; apply(); });
  appSel.addEventListener("change", () => { filter.app = appSel.value; apply(); });
  classSel.addEventListener("change", () => { filter.class = classSel.value; apply(); });
  handlerBox.addEventListener("input", debounce(() => {
    if (filter.handler === handlerBox.value.trim()) return;
    filter.handler = handlerBox.value.trim();
    apply();
  }, 300));

  function list() { return [...letters.values()].sort((a, b) => b.id - a.id); }

  function countText(n) {
    if (!total) return loaded ? t("dead.countShown", { n: fmtNum(n) }) : "";
    if (!total.count_exact) return t("dead.countMore", { n: fmtNum(n), total: fmtNum(total.count) });
    return n < total.count ? t("dead.countOf", { n: fmtNum(n), total: fmtNum(total.count) }) : t("dead.count", { total: fmtNum(total.count) });
  }

  function replayedCell(d) {
    if (!d.replayed_at) return h("span", { class: "muted" }, "—");
    return h("div", { class: "dead-replayed", title: t("dead.replayedTip", { by: d.replayed_by, n: d.replays, token: d.replay_token }) },
      h("span", { class: "pill pill-info" }, t("dead.replayedBy", { by: d.replayed_by })),
      h("div", { class: "sub-line" }, relTime(d.replayed_at), d.replays > 1 ? " · " + t("dead.replays", { n: d.replays }) : ""));
  }

  function render() {
    const rows = list();
    const cols = [
      { sig: d => d.died_at, cell: d => [absTime(d.died_at), h("div", { class: "sub-line" }, relTime(d.died_at))] },
      { sig: d => d.app, cell: d => h("span", { class: "app-tag" }, d.app) },
      { sig: d => d.job_id + d.job_name + d.handler, cell: d => [h("a", { href: "#/jobs/" + d.job_id, class: "link dead-job", title: t("common.idTip", { id: d.job_id }) }, d.job_name),
        h("div", { class: "sub-line mono" }, d.handler)] },
      { class: "num mono", sig: d => d.run_id, cell: d => h("a", { href: "#/runs/" + d.run_id, class: "link dead-run" }, "#" + d.run_id) },
      { class: "num mono", sig: d => d.slot, cell: d => String(d.slot) },
      { sig: d => d.error_class || "", cell: d => classPill(d) },
      { class: "error-cell dead-error", sig: d => errText(d), cell: d => {
        const full = errText(d);
        return h("span", { title: full }, full.length > ERR_MAX ? full.slice(0, ERR_MAX) + "…" : full);
      } },
      { class: "num", sig: d => d.attempt, cell: d => String(d.attempt) },
      { class: "dead-replay-col", sig: d => `${d.replayed_at || ""}/${d.replays}`, cell: d => replayedCell(d) },
    ];
    if (op) cols.unshift({ class: "col-check", sig: d => String(selected.has(d.id)), cell: d => h("input", { type: "checkbox", class: "dead-check", checked: selected.has(d.id),
      "aria-label": t("dead.selectOne", { id: d.id }), dataset: { id: d.id }, onchange: ev => {
        ev.target.checked ? selected.add(d.id) : selected.delete(d.id);
        render();
      } }) });
    syncTable(tbody, rows, d => d.id, cols, d => ({ class: refused.has(d.id) ? "dead-refused" : "" }));
    table.hidden = !rows.length;
    empty.hidden = !loaded || !!rows.length;
    const filtered = filter.app || filter.job_id || filter.handler || filter.class;
    fill(empty, filtered ? emptyState(t("dead.noMatch"), t("dead.noMatchSub")) : emptyState(t("dead.none"), t("dead.noneSub")));
    more.hidden = !next;
    count.textContent = countText(rows.length);
    if (op) {
      for (const id of [...selected]) if (!letters.has(id)) selected.delete(id);
      pageBox.checked = rows.length > 0 && rows.every(d => selected.has(d.id));
      pageBox.indeterminate = selected.size > 0 && !pageBox.checked;
      selInfo.textContent = selected.size ? t("dead.selected", { n: fmtNum(selected.size) }) : "";
      replayBtn.disabled = !selected.size;
    }
  }

  /**
   * replay asks for a confirmation (with "force" for letters replayed
   * already) and replays the selected letters. A refusal keeps the dialog
   * open and names each refused letter (the API's ids[i]) with its reason;
   * their rows are marked.
   */
  async function replay() {
    const ids = [...selected].sort((a, b) => b - a);
    if (!ids.length) return;
    const already = ids.filter(id => letters.get(id) && letters.get(id).replayed_at).length;
    const force = h("input", { type: "checkbox", id: "dead-force" });
    // The params the slots ran with, when they share them: edited, every
    // selected slot runs with the new ones instead.
    const shared = new Set(ids.map(id => (letters.get(id) || {}).params));
    const common = shared.size === 1 && [...shared][0] !== undefined ? [...shared][0] : "";
    const paramsBox = h("textarea", { id: "dead-params", name: "params", rows: 3, class: "mono", spellcheck: "false",
      placeholder: shared.size > 1 ? t("dead.paramsMixed") : "", "aria-describedby": "dead-params-help" });
    paramsBox.value = common;
    const body = h("div", { class: "form-stack" },
      h("p", {}, t("dead.confirm", { n: fmtNum(ids.length) })),
      h("p", { class: "muted" }, t("dead.confirmNote")),
      already ? h("p", { class: "text-warn", id: "dead-already" }, t("dead.already", { n: fmtNum(already) })) : null,
      h("label", { class: "field" }, h("span", { class: "field-label" }, t("dead.params")), paramsBox,
        h("span", { class: "field-help", id: "dead-params-help" }, t("dead.paramsHelp"))),
      h("label", { class: "check" }, force, h("span", {}, t("dead.force"))));
    let answer = null;
    const ok = await confirmDialog({ title: t("dead.replayTitle", { n: fmtNum(ids.length) }), message: body, confirmLabel: t("dead.replay"), id: "dead-replay-dialog",
      onConfirm: async () => {
        const req = { ids, force: force.checked };
        const edited = paramsBox.value.trim();
        if (edited !== "" && edited !== common.trim()) req.params = replayParams(edited);
        try {
          answer = await api("POST", "/dead/replay", req);
          refused = new Set();
        } catch (e) {
          throw refusal(e, ids);
        }
      } });
    if (!ok || !answer) return;
    for (const d of answer.replayed) if (letters.has(d.id)) letters.set(d.id, d);
    selected.clear();
    render();
    toast(t("dead.replayedToast", { n: fmtNum(answer.replayed.length) }));
    ctx.refreshNow();
  }

  /**
   * replayParams is the params of a replay as the API takes them: a JSON
   * object when the text is one, else the text itself (as a job's params
   * are written). Text that starts like an object but is not one is an
   * error the dialog shows.
   */
  function replayParams(text) {
    if (!text.startsWith("{")) return text;
    try {
      return JSON.parse(text);
    } catch (e) {
      throw new Error(t("dead.paramsBadJSON", { err: e.message }));
    }
  }

  /** refusal is the error a refused replay shows: its text, then each refused letter. */
  function refusal(e, ids) {
    const fields = fieldTexts(e);
    const lines = [];
    const marked = new Set();
    for (const [k, why] of Object.entries(fields)) {
      const m = /^ids\[(\d+)\]$/.exec(k);
      const id = m ? ids[Number(m[1])] : undefined;
      if (id === undefined) { lines.push(`${k}: ${why}`); continue; }
      marked.add(id);
      const d = letters.get(id);
      lines.push(t("dead.refusedLine", { id, what: d ? `${d.app}/${d.job_name} · ${t("common.runN", { id: d.run_id })} · ${t("dead.slotN", { slot: d.slot })}` : "", why }));
    }
    if (marked.size) {
      refused = marked;
      render();
    }
    const head = marked.size ? t("dead.refused", { n: fmtNum(marked.size) }) : e.message;
    return new Error([head, ...lines.slice(0, 20), lines.length > 20 ? t("dead.refusedMore", { n: lines.length - 20 }) : null].filter(Boolean).join("\n"));
  }

  async function loadMore() {
    if (!next) return;
    const g = gen;
    const page = await api("GET", "/dead" + qs({ ...filter, cursor: next, limit: PAGE }));
    if (g !== gen || !ctx.isCurrent()) return;
    page.dead.forEach(d => letters.set(d.id, d));
    next = page.next_cursor || null;
    render();
  }

  // refresh reads the first page again (new letters, replays) and keeps
  // the older pages loaded.
  async function refresh() {
    if (!setup) {
      const [{ apps }, first] = await Promise.all([api("GET", "/apps"), api("GET", "/jobs" + qs({ limit: 50 }))]);
      appSel.append(...apps.map(a => h("option", { value: a.name }, a.name)));
      if (filter.app && !apps.some(a => a.name === filter.app)) appSel.append(h("option", { value: filter.app }, filter.app));
      appSel.value = filter.app;
      jobOptions(first.jobs);
      setup = true;
    }
    const g = gen;
    const page = await api("GET", "/dead" + qs({ ...filter, limit: PAGE }));
    if (g !== gen || !ctx.isCurrent()) return;
    page.dead.forEach(d => letters.set(d.id, d));
    if (page.count !== undefined) total = { count: page.count, count_exact: page.count_exact };
    if (!loaded) next = page.next_cursor || null;
    loaded = true;
    render();
  }

  return { refresh, interval: () => 5000 };
}
