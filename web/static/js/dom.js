// DOM helpers: element builders, keyed table updates that keep focus and
// open menus, toasts, modal dialogs and the shared tooltip. No inline
// styles or handlers anywhere (the CSP forbids them): dynamic sizes and
// colours go through the CSSOM.
import { t, fmtRel, fmtDateTime, status as statusLabel } from "./i18n.js";

const SVGNS = "http://www.w3.org/2000/svg";

function apply(e, attrs) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.setAttribute("class", Array.isArray(v) ? v.filter(Boolean).join(" ") : v);
    else if (k === "dataset") Object.assign(e.dataset, v);
    else if (k === "css") for (const [p, val] of Object.entries(v)) e.style.setProperty(p, val);
    else if (k.startsWith("on") && typeof v === "function") e.addEventListener(k.slice(2), v);
    else if (k === "text") e.textContent = v;
    else if (v === true) e.setAttribute(k, "");
    else e.setAttribute(k, String(v));
  }
}

function append(e, kids) {
  for (const k of kids.flat(Infinity)) {
    if (k === null || k === undefined || k === false) continue;
    e.append(k instanceof Node ? k : document.createTextNode(String(k)));
  }
}

/** h builds an HTML element: h("a", {href, class, onclick}, ...children). */
export function h(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  apply(e, attrs);
  append(e, kids);
  return e;
}

/** fill replaces the children of e; null, false and undefined are skipped. */
export function fill(e, ...kids) {
  e.replaceChildren();
  append(e, kids);
  return e;
}

/** s builds an SVG element. */
export function s(tag, attrs, ...kids) {
  const e = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.setAttribute("class", Array.isArray(v) ? v.filter(Boolean).join(" ") : v);
    else if (k === "dataset") Object.assign(e.dataset, v);
    else if (k.startsWith("on") && typeof v === "function") e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, String(v));
  }
  append(e, kids);
  return e;
}

/** icon returns a small inline SVG icon by name. */
export function icon(name, cls) {
  const paths = {
    play: "M5 3.5v9l8-4.5z",
    pause: "M4 3h3v10H4zM9 3h3v10H9z",
    edit: "M11.5 2.5l2 2L6 12H4v-2zM10 4l2 2",
    trash: "M3 4.5h10M6.5 4.5V3h3v1.5M4.5 4.5l.7 9h5.6l.7-9",
    plus: "M8 3v10M3 8h10",
    retry: "M13 8a5 5 0 1 1-1.6-3.7M13 2.5v3h-3",
    stop: "M4 4h8v8H4z",
    power: "M8 2v6M4.6 4.6a5 5 0 1 0 6.8 0",
    search: "M7 12A5 5 0 1 0 7 2a5 5 0 0 0 0 10zM10.6 10.6L14 14",
    back: "M10 3L5 8l5 5",
    more: "M3.5 8h.01M8 8h.01M12.5 8h.01",
    bolt: "M9 1.5L3.5 9H8l-1 5.5L12.5 7H8z",
    copy: "M5.5 5.5h7v7h-7zM3.5 10.5v-7h7",
    x: "M4 4l8 8M12 4l-8 8",
    download: "M8 2.5v8M4.5 7L8 10.5 11.5 7M3 13.5h10",
  };
  return s("svg", { viewBox: "0 0 16 16", class: ["icon", cls], "aria-hidden": "true" },
    s("path", { d: paths[name] || "", fill: name === "play" || name === "pause" || name === "stop" || name === "bolt" ? "currentColor" : "none",
      stroke: "currentColor", "stroke-width": name === "more" ? 3 : 1.6, "stroke-linecap": "round", "stroke-linejoin": "round" }));
}

/** badge renders a status pill. */
export function badge(st, extra) {
  return h("span", { class: ["badge", "st-" + st, extra], "data-status": st }, h("span", { class: "dot" }), statusLabel(st));
}

/** pill renders a neutral or coloured label. */
export function pill(text, kind) {
  return h("span", { class: ["pill", kind && "pill-" + kind] }, text);
}

/** relTime renders a <time> element kept up to date by the ticker. */
export function relTime(iso, opts = {}) {
  if (!iso) return h("span", { class: "muted" }, opts.empty ?? "—");
  return h("time", { datetime: iso, "data-rel": "1", title: fmtDateTime(iso), class: opts.class }, fmtRel(iso));
}

/** absTime renders an absolute instant with a relative title. */
export function absTime(iso) {
  if (!iso) return h("span", { class: "muted" }, "—");
  return h("time", { datetime: iso, "data-abs": "1", title: fmtRel(iso), class: "nowrap" }, fmtDateTime(iso));
}

/** tickTimes refreshes every relative and absolute time on the page. */
export function tickTimes(root = document) {
  const now = Date.now();
  for (const e of root.querySelectorAll("time[data-rel]")) {
    const v = fmtRel(e.getAttribute("datetime"), now);
    if (e.textContent !== v) e.textContent = v;
  }
  for (const e of root.querySelectorAll("time[data-abs]")) {
    e.title = fmtRel(e.getAttribute("datetime"), now);
  }
}

/**
 * syncTable keeps tbody in step with items: one row per key, cells rebuilt
 * only when their signature changes, so an open menu, a focused button or
 * a text selection in an unchanged cell survives a refresh.
 * cols: [{ sig(item) → string, cell(item) → Node|string, class }]
 */
export function syncTable(tbody, items, key, cols, rowAttrs) {
  const existing = new Map();
  for (const tr of [...tbody.children]) {
    if (tr.dataset.key !== undefined) existing.set(tr.dataset.key, tr); else tr.remove();
  }
  let prev = null;
  for (const item of items) {
    const k = String(key(item));
    let tr = existing.get(k);
    if (!tr) {
      tr = h("tr", { dataset: { key: k } });
      cols.forEach(c => tr.append(h("td", { class: c.class })));
    }
    existing.delete(k);
    if (rowAttrs) {
      const a = rowAttrs(item);
      tr.className = a.class || "";
    }
    cols.forEach((c, i) => {
      const td = tr.children[i];
      const sig = c.sig ? String(c.sig(item)) : null;
      if (sig !== null && td.dataset.sig === sig) return;
      const content = c.cell(item);
      td.replaceChildren(...(Array.isArray(content) ? content : [content]).filter(x => x !== null && x !== undefined && x !== false)
        .map(x => (x instanceof Node ? x : document.createTextNode(String(x)))));
      if (sig !== null) td.dataset.sig = sig;
    });
    const want = prev ? prev.nextSibling : tbody.firstChild;
    if (want !== tr) tbody.insertBefore(tr, want);
    prev = tr;
  }
  for (const tr of existing.values()) tr.remove();
}

/** emptyRow is the single row shown by an empty table. */
export function emptyState(text, sub) {
  return h("div", { class: "empty" }, h("div", { class: "empty-title" }, text), sub ? h("div", { class: "empty-sub" }, sub) : null);
}

/** toast shows a short message; kind is "ok", "error", "warn" or "info". Toasts let clicks through (console.css): they never cover a control. */
export function toast(msg, kind = "ok") {
  const box = document.getElementById("toasts");
  const el = h("div", { class: ["toast", "toast-" + kind], role: kind === "error" ? "alert" : "status" }, msg);
  box.append(el);
  setTimeout(() => { el.classList.add("toast-out"); setTimeout(() => el.remove(), 300); }, kind === "error" || kind === "warn" ? 7000 : 3500);
}

/**
 * modal opens a dialog. body is a Node; actions: [{label, kind, value,
 * submit}] — a submit action runs onSubmit(value) first and keeps the
 * dialog open when it throws (the error is shown in the dialog).
 * Resolves with the value of the chosen action (null when dismissed).
 */
export function modal({ title, body, actions, onSubmit, wide, id }) {
  return new Promise(resolve => {
    const err = h("div", { class: "modal-error", role: "alert", hidden: true });
    const buttons = actions.map(a => h("button", {
      type: a.submit ? "submit" : "button", class: ["btn", a.kind ? "btn-" + a.kind : "btn-secondary"],
      value: a.value ?? "", dataset: { action: a.value ?? "" },
    }, a.label));
    const form = h("form", { method: "dialog", class: "modal-form" },
      h("div", { class: "modal-head" }, h("h2", {}, title),
        h("button", { type: "button", class: "icon-btn modal-close", "aria-label": t("common.close") }, icon("x"))),
      h("div", { class: "modal-body" }, body, err),
      h("div", { class: "modal-actions" }, buttons));
    const dlg = h("dialog", { class: ["modal", wide && "modal-wide"], id }, form);
    document.body.append(dlg);
    let done = false;
    const finish = v => { if (done) return; done = true; dlg.close(); dlg.remove(); resolve(v); };
    form.querySelector(".modal-close").addEventListener("click", () => finish(null));
    buttons.forEach((b, i) => {
      const a = actions[i];
      if (a.submit) return;
      b.addEventListener("click", () => finish(a.value ?? null));
    });
    form.addEventListener("submit", async ev => {
      ev.preventDefault();
      const a = actions.find(x => x.submit);
      if (!onSubmit) return finish(a ? a.value : null);
      buttons.forEach(b => { b.disabled = true; });
      err.hidden = true;
      try {
        const v = await onSubmit(a ? a.value : null);
        finish(v === undefined ? (a ? a.value : true) : v);
      } catch (e) {
        err.textContent = e.message || String(e);
        err.hidden = false;
        buttons.forEach(b => { b.disabled = false; });
      }
    });
    dlg.addEventListener("cancel", ev => { ev.preventDefault(); finish(null); });
    dlg.showModal();
    const first = form.querySelector("input, textarea, select");
    if (first) first.focus();
  });
}

/** confirmDialog asks a yes/no question; resolves true when confirmed. */
export async function confirmDialog({ title, message, confirmLabel, danger, onConfirm, id }) {
  const v = await modal({
    title, id,
    body: typeof message === "string" ? h("p", {}, message) : message,
    actions: [
      { label: t("common.cancel"), value: "cancel" },
      { label: confirmLabel || t("common.confirm"), kind: danger ? "danger" : "primary", value: "ok", submit: true },
    ],
    onSubmit: onConfirm ? async () => { await onConfirm(); return "ok"; } : undefined,
  });
  return v === "ok";
}

let tipOwner = null;
/** showTip shows the shared tooltip near (x, y) with content. */
export function showTip(owner, content, x, y) {
  const tip = document.getElementById("tip");
  tipOwner = owner;
  tip.replaceChildren(content);
  tip.hidden = false;
  const r = tip.getBoundingClientRect();
  let left = x + 14, top = y + 14;
  if (left + r.width > window.innerWidth - 8) left = x - r.width - 14;
  if (top + r.height > window.innerHeight - 8) top = y - r.height - 14;
  tip.style.setProperty("left", Math.max(8, left) + "px");
  tip.style.setProperty("top", Math.max(8, top) + "px");
}

/** hideTip hides the tooltip if owner still owns it (or always if no owner). */
export function hideTip(owner) {
  if (owner && owner !== tipOwner) return;
  document.getElementById("tip").hidden = true;
  tipOwner = null;
}

/** hideTipWithin hides the tooltip when its owner is inside el (el is being redrawn). */
export function hideTipWithin(el) {
  if (tipOwner && el.contains(tipOwner)) hideTip();
}

/** kv renders a definition list from [label, value] pairs. */
export function kv(pairs, cls) {
  return h("dl", { class: ["kv", cls] }, pairs.filter(Boolean).map(([k, v]) => [h("dt", {}, k), h("dd", {}, v ?? "—")]));
}

/** card wraps content with an optional title and header actions. */
export function card(title, content, opts = {}) {
  return h("section", { class: ["card", opts.class], id: opts.id },
    title ? h("div", { class: "card-head" }, h("h3", {}, title), opts.sub ? h("span", { class: "card-sub" }, opts.sub) : null,
      opts.actions ? h("div", { class: "card-actions" }, opts.actions) : null) : null,
    h("div", { class: ["card-body", opts.flush && "flush"] }, content));
}

/** pageHead renders the title row of a page. */
export function pageHead(title, sub, actions) {
  return h("div", { class: "page-head" },
    h("div", { class: "page-title" }, h("h1", {}, title), sub ? h("div", { class: "page-sub" }, sub) : null),
    actions ? h("div", { class: "page-actions" }, actions) : null);
}

/** debounce delays fn until ms passed without a call. */
export function debounce(fn, ms) {
  let timer = null;
  const d = (...args) => { clearTimeout(timer); timer = setTimeout(() => fn(...args), ms); };
  d.cancel = () => clearTimeout(timer);
  return d;
}

/** button builds a button with an optional icon. */
export function button(label, opts = {}) {
  return h("button", {
    type: opts.type || "button", class: ["btn", "btn-" + (opts.kind || "secondary"), opts.size && "btn-" + opts.size, opts.class],
    onclick: opts.onclick, title: opts.title, disabled: opts.disabled, id: opts.id, dataset: opts.dataset,
  }, opts.icon ? icon(opts.icon) : null, label ? h("span", {}, label) : null);
}

/** busy disables a button while the promise runs. */
export async function busy(btn, promise) {
  btn.disabled = true;
  btn.classList.add("is-busy");
  try { return await promise; } finally { btn.disabled = false; btn.classList.remove("is-busy"); }
}
