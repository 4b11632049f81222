// contrastFailures lists the visible texts of the page whose contrast with
// what is behind them is below WCAG AA: 4.5:1, or 3:1 for large text (24 px,
// or 18.66 px bold). The text colour is the computed colour (SVG text: its
// fill), faded by the opacity of the element and its ancestors; the
// background is found by walking up the ancestors, blending each
// semi-transparent background colour over the next one down to the page's
// (an SVG text's background is the last filled shape under its centre, over
// the SVG's ancestors). Disabled controls are exempt (WCAG 1.4.3), and so are
// texts no one sees (hidden, zero size, transparent). It returns
// [{text, where, fg, bg, ratio, need}], at most limit of them, and the count.
(limit => {
  const parse = c => {
    const m = /rgba?\(([^)]+)\)/.exec(c || "");
    if (!m) return null;
    const p = m[1].split(/[\s,/]+/).filter(Boolean).map(Number);
    return { r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1 };
  };
  const over = (top, under) => { // top blended over an opaque under
    const a = top.a;
    return { r: top.r * a + under.r * (1 - a), g: top.g * a + under.g * (1 - a), b: top.b * a + under.b * (1 - a), a: 1 };
  };
  const lum = c => {
    const ch = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * ch(c.r) + 0.7152 * ch(c.g) + 0.0722 * ch(c.b);
  };
  const ratio = (a, b) => { const x = lum(a), y = lum(b); return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); };
  const hex = c => "#" + [c.r, c.g, c.b].map(v => Math.round(v).toString(16).padStart(2, "0")).join("");
  const WHITE = { r: 255, g: 255, b: 255, a: 1 };

  // The colours behind el: its own background and its ancestors', top first.
  function layers(el) {
    const out = [];
    for (let e = el; e && e.nodeType === 1; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c && c.a > 0) { out.push(c); if (c.a >= 1) return out; }
    }
    out.push(WHITE); // the canvas
    return out;
  }
  const flatten = ls => { let c = ls[ls.length - 1]; for (let i = ls.length - 2; i >= 0; i--) c = over(ls[i], c); return c; };
  function opacity(el) {
    let o = 1;
    for (let e = el; e && e.nodeType === 1; e = e.parentElement) o *= Number(getComputedStyle(e).opacity);
    return o;
  }
  // The filled SVG shape drawn last under the centre of text t, if any.
  function shapeUnder(t) {
    const svg = t.ownerSVGElement;
    if (!svg) return null;
    const r = t.getBoundingClientRect(), x = r.left + r.width / 2, y = r.top + r.height / 2;
    let found = null;
    for (const s of svg.querySelectorAll("rect, circle, ellipse, polygon, path")) {
      if (!(s.compareDocumentPosition(t) & Node.DOCUMENT_POSITION_FOLLOWING)) continue; // drawn after t
      const st = getComputedStyle(s), f = parse(st.fill);
      if (!f || f.a === 0 || st.display === "none" || st.visibility !== "visible") continue;
      const b = s.getBoundingClientRect();
      if (x < b.left || x > b.right || y < b.top || y > b.bottom) continue;
      found = { ...f, a: f.a * Number(st.fillOpacity) * opacity(s) };
    }
    return found;
  }
  const visible = el => el.checkVisibility({ opacityProperty: true, visibilityProperty: true }) && el.getClientRects().length > 0 &&
    el.getBoundingClientRect().width > 0 && el.getBoundingClientRect().height > 0;
  const where = el => {
    const parts = [];
    for (let e = el; e && e !== document.body && parts.length < 4; e = e.parentElement) {
      parts.unshift(e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") + [...e.classList].slice(0, 2).map(c => "." + c).join(""));
      if (e.id) break;
    }
    return parts.join(" > ");
  };

  const failures = [];
  let count = 0, checked = 0;
  function check(el, text, fgColor) {
    if (!visible(el) || el.closest(":disabled, [aria-disabled=true], .is-disabled")) return;
    const fg0 = parse(fgColor);
    if (!fg0) return;
    const st = getComputedStyle(el);
    const size = parseFloat(st.fontSize), bold = Number(st.fontWeight) >= 700;
    const need = size >= 24 || (size >= 18.66 && bold) ? 3 : 4.5;
    let bgLayers = layers(el instanceof SVGElement ? el.ownerSVGElement : el);
    if (el instanceof SVGElement) { const s = shapeUnder(el); if (s && s.a > 0) bgLayers = [s, ...bgLayers]; }
    const bg = flatten(bgLayers);
    const fg = over({ ...fg0, a: fg0.a * opacity(el) }, bg);
    checked++;
    const r = ratio(fg, bg);
    if (r + 1e-6 >= need) return;
    count++;
    if (failures.length < limit) failures.push({ text: text.trim().slice(0, 40), where: where(el), fg: hex(fg), bg: hex(bg), ratio: Math.round(r * 100) / 100, need });
  }
  // Every element with its own text (a non-empty text node child).
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const seen = new Set();
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    if (!el || seen.has(el) || !n.nodeValue.trim()) continue;
    if (el.closest("script, style, template, option, datalist, textarea, noscript")) continue;
    seen.add(el);
    check(el, n.nodeValue, el instanceof SVGElement ? getComputedStyle(el).fill : getComputedStyle(el).color);
  }
  // The values shown in inputs, selects and text areas.
  for (const el of document.querySelectorAll("input:not([type=checkbox]):not([type=radio]):not([type=hidden]), select, textarea")) {
    const v = el.tagName === "SELECT" ? (el.selectedOptions[0] || {}).text || "" : el.value;
    if (v.trim()) check(el, v, getComputedStyle(el).color);
  }
  return { count, checked, failures };
})
