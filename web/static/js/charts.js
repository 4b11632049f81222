// Charts drawn as SVG by this file: stacked bars, lines and horizontal
// duration bars. Each chart redraws itself when its container resizes.
import { s, h, showTip, hideTip, hideTipWithin } from "./dom.js";
import { fmtHM, fmtDateTime } from "./i18n.js";

const observed = new WeakMap();
const ro = typeof ResizeObserver !== "undefined" ? new ResizeObserver(entries => {
  for (const e of entries) {
    const st = observed.get(e.target);
    if (st && Math.abs(e.contentRect.width - st.width) > 1) st.draw();
  }
}) : null;

function mount(container, draw) {
  let st = observed.get(container);
  if (!st) {
    st = { width: 0, draw: null };
    observed.set(container, st);
    if (ro) ro.observe(container);
  }
  st.draw = () => { st.width = container.clientWidth; hideTipWithin(container); draw(st.width || 600); };
  st.draw();
}

/** niceMax rounds v up to 1, 2, 2.5 or 5 times a power of ten. */
export function niceMax(v) {
  if (!(v > 0)) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(v)));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

function xLabelStep(n, width, labelWidth = 70) {
  const fit = Math.max(2, Math.floor(width / labelWidth));
  const raw = Math.ceil(n / fit);
  for (const st of [1, 2, 5, 10, 15, 20, 30, 60, 120]) if (st >= raw) return st;
  return raw;
}

/**
 * stackedBars draws one bar per bucket: buckets [{t (ms), values: {key: n}}],
 * series [{key, label, cls}] bottom first. opts: height, yFormat, tip(bucket),
 * xFormat (axis labels; default fmtHM), xLabelWidth (px per axis label).
 */
export function stackedBars(container, buckets, series, opts = {}) {
  mount(container, width => {
    const H = opts.height || 200, M = { l: 40, r: 8, t: 10, b: 22 };
    const pw = Math.max(10, width - M.l - M.r), ph = H - M.t - M.b;
    const n = Math.max(1, buckets.length);
    const top = Math.max(0, ...buckets.map(b => series.reduce((a, se) => a + (b.values[se.key] || 0), 0)));
    const max = Math.max(4, Math.ceil(niceMax(top / 4)) * 4); // whole numbers on every tick
    const y = v => M.t + ph - (v / max) * ph;
    const bw = pw / n;
    const g = s("svg", { class: "chart", width, height: H, viewBox: `0 0 ${width} ${H}`, role: "img", "aria-label": opts.label || "" });
    for (let i = 0; i <= 4; i++) {
      const v = (max / 4) * i, yy = Math.round(y(v)) + 0.5;
      g.append(s("line", { class: "gridline", x1: M.l, x2: width - M.r, y1: yy, y2: yy }));
      g.append(s("text", { class: "axis", x: M.l - 6, y: yy + 3.5, "text-anchor": "end" }, (opts.yFormat || String)(Math.round(v * 100) / 100)));
    }
    const step = xLabelStep(n, pw, opts.xLabelWidth);
    buckets.forEach((b, i) => {
      const x0 = M.l + i * bw;
      const gap = Math.min(3, bw * 0.25);
      let acc = 0;
      const col = s("g", { class: "bar", dataset: { i } });
      for (const se of series) {
        const v = b.values[se.key] || 0;
        if (v <= 0) continue;
        const top = y(acc + v), bottom = y(acc);
        col.append(s("rect", { class: se.cls, x: (x0 + gap / 2).toFixed(2), y: top.toFixed(2), width: Math.max(1, bw - gap).toFixed(2), height: Math.max(0.5, bottom - top).toFixed(2), rx: bw > 8 ? 1.5 : 0 }));
        acc += v;
      }
      const hit = s("rect", { class: "hit", x: x0.toFixed(2), y: M.t, width: bw.toFixed(2), height: ph });
      hit.addEventListener("mousemove", ev => { col.classList.add("hover"); showTip(hit, opts.tip ? opts.tip(b) : h("div", {}, fmtDateTime(b.t)), ev.clientX, ev.clientY); });
      hit.addEventListener("mouseleave", () => { col.classList.remove("hover"); hideTip(hit); });
      g.append(col, hit);
      if (i % step === 0) g.append(s("text", { class: "axis", x: (x0 + bw / 2).toFixed(1), y: H - 6, "text-anchor": "middle" }, (opts.xFormat || fmtHM)(b.t)));
    });
    g.append(s("line", { class: "baseline", x1: M.l, x2: width - M.r, y1: M.t + ph + 0.5, y2: M.t + ph + 0.5 }));
    container.replaceChildren(g);
  });
}

/**
 * lines draws series over buckets [{t, values: {key: number|null}}]; null
 * leaves a gap. opts: height, yFormat, yMax, area (key filled below), tip,
 * xFormat (axis labels; default fmtHM), xLabelWidth (px per axis label).
 */
export function lines(container, buckets, series, opts = {}) {
  mount(container, width => {
    const H = opts.height || 200, M = { l: 48, r: 8, t: 10, b: 22 };
    const pw = Math.max(10, width - M.l - M.r), ph = H - M.t - M.b;
    const n = Math.max(1, buckets.length);
    let max = opts.yMax;
    if (max === undefined) {
      let m = 0;
      for (const b of buckets) for (const se of series) { const v = b.values[se.key]; if (v != null && v > m) m = v; }
      max = niceMax(Math.max(m, opts.minMax || 0));
    }
    const x = i => M.l + (n === 1 ? pw / 2 : (i / (n - 1)) * pw);
    const y = v => M.t + ph - (Math.min(v, max) / max) * ph;
    const g = s("svg", { class: "chart", width, height: H, viewBox: `0 0 ${width} ${H}`, role: "img", "aria-label": opts.label || "" });
    for (let i = 0; i <= 4; i++) {
      const v = (max / 4) * i, yy = Math.round(y(v)) + 0.5;
      g.append(s("line", { class: "gridline", x1: M.l, x2: width - M.r, y1: yy, y2: yy }));
      g.append(s("text", { class: "axis", x: M.l - 6, y: yy + 3.5, "text-anchor": "end" }, (opts.yFormat || String)(v)));
    }
    const step = xLabelStep(n, pw, opts.xLabelWidth);
    buckets.forEach((b, i) => {
      if (i % step === 0) g.append(s("text", { class: "axis", x: x(i).toFixed(1), y: H - 6, "text-anchor": "middle" }, (opts.xFormat || fmtHM)(b.t)));
    });
    for (const se of series) {
      let d = "", area = "", runStart = -1;
      const closeArea = last => { if (runStart >= 0) area += `L${x(last).toFixed(1)},${y(0).toFixed(1)}L${x(runStart).toFixed(1)},${y(0).toFixed(1)}Z`; runStart = -1; };
      let prevOK = false;
      buckets.forEach((b, i) => {
        const v = b.values[se.key];
        if (v == null) { if (prevOK) closeArea(i - 1); prevOK = false; return; }
        const pt = `${x(i).toFixed(1)},${y(v).toFixed(1)}`;
        d += (prevOK ? "L" : "M") + pt;
        if (!prevOK) { runStart = i; area += "M" + pt; } else area += "L" + pt;
        prevOK = true;
        if (i === buckets.length - 1) closeArea(i);
      });
      if (opts.area === se.key && area) g.append(s("path", { class: ["area", se.cls], d: area }));
      if (d) g.append(s("path", { class: ["line", se.cls], d }));
      // Lone points (a value between two gaps) get a dot so they show.
      buckets.forEach((b, i) => {
        const v = b.values[se.key];
        const lone = v != null && (i === 0 || buckets[i - 1].values[se.key] == null) && (i === n - 1 || buckets[i + 1].values[se.key] == null);
        if (lone) g.append(s("circle", { class: ["pt", se.cls], cx: x(i), cy: y(v), r: 2.5 }));
      });
    }
    g.append(s("line", { class: "baseline", x1: M.l, x2: width - M.r, y1: M.t + ph + 0.5, y2: M.t + ph + 0.5 }));
    const cross = s("line", { class: "crosshair", x1: 0, x2: 0, y1: M.t, y2: M.t + ph, visibility: "hidden" });
    g.append(cross);
    const overlay = s("rect", { class: "hit", x: M.l, y: M.t, width: pw, height: ph });
    overlay.addEventListener("mousemove", ev => {
      const r = overlay.getBoundingClientRect();
      const i = Math.max(0, Math.min(n - 1, Math.round(((ev.clientX - r.left) / Math.max(1, r.width)) * (n - 1))));
      cross.setAttribute("x1", x(i)); cross.setAttribute("x2", x(i)); cross.setAttribute("visibility", "visible");
      showTip(overlay, opts.tip ? opts.tip(buckets[i]) : h("div", {}, fmtDateTime(buckets[i].t)), ev.clientX, ev.clientY);
    });
    overlay.addEventListener("mouseleave", () => { cross.setAttribute("visibility", "hidden"); hideTip(overlay); });
    g.append(overlay);
    container.replaceChildren(g);
  });
}

/**
 * durationBars draws one vertical bar per run (oldest left), height by
 * duration, class by status. items [{key, value (ms), cls, tip, href}].
 */
export function durationBars(container, items, opts = {}) {
  mount(container, width => {
    const H = opts.height || 120, M = { l: 48, r: 8, t: 8, b: 8 };
    const pw = Math.max(10, width - M.l - M.r), ph = H - M.t - M.b;
    const max = niceMax(Math.max(0, ...items.map(i => i.value || 0)));
    const n = Math.max(items.length, opts.slots || 30);
    const bw = pw / n;
    const g = s("svg", { class: "chart", width, height: H, viewBox: `0 0 ${width} ${H}` });
    for (let i = 0; i <= 2; i++) {
      const v = (max / 2) * i, yy = Math.round(M.t + ph - (v / max) * ph) + 0.5;
      g.append(s("line", { class: "gridline", x1: M.l, x2: width - M.r, y1: yy, y2: yy }));
      g.append(s("text", { class: "axis", x: M.l - 6, y: yy + 3.5, "text-anchor": "end" }, (opts.yFormat || String)(v)));
    }
    items.forEach((it, i) => {
      const x0 = M.l + (n - items.length + i) * bw;
      const hgt = Math.max(2, ((it.value || 0) / max) * ph);
      const r = s("rect", { class: ["dbar", it.cls], x: (x0 + 1).toFixed(2), y: (M.t + ph - hgt).toFixed(2), width: Math.max(1, bw - 2).toFixed(2), height: hgt.toFixed(2), rx: 1.5 });
      r.addEventListener("mousemove", ev => showTip(r, it.tip(), ev.clientX, ev.clientY));
      r.addEventListener("mouseleave", () => hideTip(r));
      if (it.href) r.addEventListener("click", () => { location.hash = it.href; });
      g.append(r);
    });
    g.append(s("line", { class: "baseline", x1: M.l, x2: width - M.r, y1: M.t + ph + 0.5, y2: M.t + ph + 0.5 }));
    container.replaceChildren(g);
  });
}

/** legend renders colour keys for series. */
export function legend(series) {
  return h("div", { class: "legend" }, series.map(se => h("span", { class: "legend-item" }, h("span", { class: ["swatch", se.cls] }), se.label)));
}
