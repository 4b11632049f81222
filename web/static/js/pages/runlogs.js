// The logs panel of the run detail page: the lines handlers logged through
// Task.Logger, shipped by the executors (GET /runs/:id/logs). It follows new
// lines by polling with after_seq on every refresh of the page (every second
// while the run is active), filters by slot and level on the server, and
// keeps at most MAX_ROWS lines in the page. Log text is only ever set as
// text nodes (h() children), never parsed as HTML.
import { api, qs } from "../api.js";
import { t, fmtTime, fmtDateTime, fmtNum } from "../i18n.js";
import { h, fill } from "../dom.js";

const MAX_ROWS = 5000;
const PAGE = 500;
const MAX_PAGES = 10; // per refresh: a backlog is caught up over a few refreshes

function levelClass(level) {
  const l = String(level || "").toUpperCase();
  if (l.startsWith("ERROR")) return "error";
  if (l.startsWith("WARN")) return "warn";
  if (l.startsWith("DEBUG")) return "debug";
  return "info";
}

function attrText(attrs) {
  if (!attrs || typeof attrs !== "object") return "";
  return Object.entries(attrs).map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`).join(" ");
}

/** logsPanel returns the panel element and refresh(run), called by the page's refresh. */
export function logsPanel(runID) {
  let after = 0;
  let gen = 0; // bumped when the filters change: answers of older requests are ignored
  let busy = false;
  let slots = -1;
  let count = 0;
  let follow = true;
  let lastRun = null;

  const slotSel = h("select", { id: "logs-slot", "aria-label": t("logs.slot") }, h("option", { value: "" }, t("logs.allSlots")));
  const levelSel = h("select", { id: "logs-level", "aria-label": t("logs.level") },
    ["", "debug", "info", "warn", "error"].map(l => h("option", { value: l }, l ? t("logs.level." + l) : t("logs.allLevels"))));
  const followBox = h("input", { type: "checkbox", id: "logs-follow", checked: true });
  const countEl = h("span", { class: "muted", id: "logs-count" });
  const dropped = h("div", { class: "callout callout-warn logs-dropped", id: "logs-dropped", hidden: true });
  const view = h("div", { class: "log-view", id: "run-logs", role: "log", "aria-live": "off", tabindex: "0", hidden: true });
  const empty = h("div", { class: "empty log-empty", id: "logs-empty" }, h("div", { class: "empty-title" }, t("logs.none")), h("div", { class: "empty-sub" }, t("logs.noneSub")));

  const toolbar = h("div", { class: "grid-toolbar logs-toolbar" },
    h("label", { class: "inline-field" }, h("span", {}, t("logs.slot")), slotSel),
    h("label", { class: "inline-field" }, h("span", {}, t("logs.level")), levelSel),
    h("label", { class: "inline-field" }, followBox, h("span", {}, t("logs.follow"))),
    h("div", { class: "spacer" }), countEl);
  const el = h("div", { class: "logs-panel" }, toolbar, dropped, view, empty);

  function reset() {
    gen++;
    after = 0;
    count = 0;
    view.replaceChildren();
    if (lastRun) refresh(lastRun);
  }
  slotSel.addEventListener("change", reset);
  levelSel.addEventListener("change", reset);
  followBox.addEventListener("change", () => { follow = followBox.checked; if (follow) view.scrollTop = view.scrollHeight; });
  view.addEventListener("scroll", () => {
    // Scrolling up pauses following; back at the bottom resumes it.
    const atBottom = view.scrollHeight - view.scrollTop - view.clientHeight < 24;
    if (follow !== atBottom) { follow = atBottom; followBox.checked = atBottom; }
  });

  function row(l) {
    const attrs = attrText(l.attrs);
    return h("div", { class: ["log-line", "lvl-" + levelClass(l.level)], dataset: { seq: l.seq, slot: l.slot, at: Date.parse(l.at) || 0 } },
      h("span", { class: "log-time mono", title: fmtDateTime(l.at) + ` · token ${l.token} · ${t("run.attempt")} ${l.attempt}` }, fmtTime(l.at, true)),
      h("span", { class: "log-level" }, String(l.level)),
      h("span", { class: "log-slot mono" }, t("run.slotN", { n: l.slot })),
      h("span", { class: "log-msg" }, l.message),
      attrs ? h("span", { class: "log-attrs mono" }, attrs) : null);
  }

  /** insertByTime puts a line where its time belongs: lines arrive in the
   * order the admin stored them (per executor batch), shown in the order
   * they were written; equal times keep their arrival order. */
  function insertByTime(el) {
    const at = Number(el.dataset.at);
    let before = view.lastElementChild;
    while (before && Number(before.dataset.at) > at) before = before.previousElementSibling;
    if (before) before.after(el); else view.prepend(el);
  }

  /** setEnded turns following off for good once the run has ended: no
   * line will come, and the view stays where the reader is. */
  function setEnded(ended) {
    if (!ended || followBox.disabled) return;
    follow = false;
    followBox.checked = false;
    followBox.disabled = true;
    followBox.parentElement.title = t("logs.ended");
  }

  function setSlots(n) {
    if (n === slots) return;
    slots = n;
    const keep = slotSel.value;
    fill(slotSel, h("option", { value: "" }, t("logs.allSlots")),
      Array.from({ length: Math.min(n, 1024) }, (_, i) => h("option", { value: String(i) }, t("run.slotN", { n: i }))));
    slotSel.value = keep;
  }

  function renderMeta(page) {
    const d = page.dropped || {};
    const lost = (d.executor || 0) + (d.cap || 0) + (d.quota || 0);
    dropped.hidden = lost === 0;
    if (lost) {
      const parts = [];
      if (d.executor) parts.push(t("logs.droppedExecutor", { n: fmtNum(d.executor) }));
      if (d.cap) parts.push(t("logs.droppedCap", { n: fmtNum(d.cap) }));
      if (d.quota) parts.push(t("logs.droppedQuota", { n: fmtNum(d.quota) }));
      dropped.textContent = parts.join(" · ");
    }
    countEl.textContent = t("logs.count", { n: fmtNum(count), stored: fmtNum(page.stored_lines || 0) });
  }

  async function refresh(run) {
    lastRun = run;
    setSlots(run.slots);
    setEnded(!["pending", "running"].includes(run.status));
    if (busy) return;
    busy = true;
    const g = gen;
    try {
      for (let i = 0; i < MAX_PAGES; i++) {
        const page = await api("GET", `/runs/${runID}/logs` + qs({ after_seq: after, slot: slotSel.value, level: levelSel.value, limit: PAGE }));
        if (g !== gen) return;
        if (page.lines.length) {
          for (const l of page.lines) insertByTime(row(l));
          count += page.lines.length;
          while (view.childElementCount > MAX_ROWS) view.firstElementChild.remove();
          if (follow) view.scrollTop = view.scrollHeight;
        }
        after = page.next_after_seq;
        renderMeta(page);
        if (!page.has_more) break;
      }
    } finally {
      busy = false;
      empty.hidden = view.childElementCount > 0;
      view.hidden = !empty.hidden;
      if (g !== gen && lastRun) refresh(lastRun); // the filters changed meanwhile
    }
  }

  /** showSlot narrows the panel to one slot's lines and brings it into view. */
  function showSlot(n) {
    if (slotSel.value !== String(n)) { slotSel.value = String(n); reset(); }
    el.scrollIntoView({ block: "start", behavior: "smooth" });
  }

  return { el, refresh, showSlot };
}
