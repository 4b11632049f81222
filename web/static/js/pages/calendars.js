// Business calendars: the list (global ones and those of the user's apps),
// one calendar's year view (holidays, extra working days and the base week
// drawn month by month), and the create/edit dialog that takes the days as
// CSV lines or an .ics/.csv file. The admin validates; its field errors
// appear next to their fields.
import { api } from "../api.js";
import { t, getLang, fieldTexts } from "../i18n.js";
import { h, pageHead, syncTable, absTime, emptyState, modal, confirmDialog, toast, button, icon, card, kv, fill } from "../dom.js";
import { fieldSet } from "./users.js";

// Day names as the API writes a base week ("MON,TUE,WED,THU,FRI"),
// indexed by JavaScript's getUTCDay (0 = Sunday).
const DAY_NAMES = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];

/** workingWeekdays reads the API's week ("MON,TUE,…") as a set of getUTCDay numbers. */
export function workingWeekdays(week) {
  const set = new Set();
  for (const part of (week || "MON,TUE,WED,THU,FRI").split(",")) {
    const i = DAY_NAMES.indexOf(part.trim().toUpperCase());
    if (i >= 0) set.add(i);
  }
  return set;
}

/**
 * dayKind says what a date is in a calendar: "holiday" or "workday" (an
 * entry), "off" (not in the base week) or "work". days maps YYYY-MM-DD to
 * the entry.
 */
export function dayKind(date, days, week) {
  const e = days.get(date);
  if (e) return e.kind;
  const [y, m, d] = date.split("-").map(Number);
  return week.has(new Date(Date.UTC(y, m - 1, d)).getUTCDay()) ? "work" : "off";
}

function ymd(y, m, d) {
  return `${y}-${String(m).padStart(2, "0")}-${String(d).padStart(2, "0")}`;
}

/** appLabel is the app of a calendar, or "global" for the shared ones. */
function appLabel(cal) {
  return cal.app ? h("span", { class: "app-tag" }, cal.app) : h("span", { class: "pill pill-info" }, t("calendars.global"));
}

/** daysCSV writes a calendar's days as the CSV the import reads. */
function daysCSV(days) {
  return (days || []).map(d => [d.date, d.kind, d.name].filter(x => x !== undefined && x !== "").join(",")).join("\n");
}

/** calendarDialog creates (cal null) or edits a calendar; resolves the saved calendar or null. */
async function calendarDialog(cal, ctx) {
  const { field, setErrors, errs } = fieldSet();
  const app = h("input", { id: "cal-app", name: "app", autocomplete: "off", spellcheck: "false", placeholder: t("calendars.appPlaceholder") });
  const name = h("input", { id: "cal-name", name: "name", autocomplete: "off", spellcheck: "false", maxlength: 64 });
  const desc = h("input", { id: "cal-description", name: "description", autocomplete: "off", maxlength: 1024 });
  const week = h("input", { id: "cal-week", name: "week", autocomplete: "off", spellcheck: "false", placeholder: "MON-FRI" });
  const days = h("textarea", { id: "cal-days", name: "import", rows: 8, class: "mono", spellcheck: "false", placeholder: "2026-10-01,holiday,National Day\n2026-10-10,workday,Make-up workday" });
  const file = h("input", { id: "cal-file", type: "file", accept: ".ics,.csv,text/calendar,text/csv" });
  let fileFormat = "csv";
  file.addEventListener("change", async () => {
    const f = file.files[0];
    if (!f) return;
    days.value = await f.text();
    fileFormat = /\.ics$/i.test(f.name) || /^BEGIN:VCALENDAR/m.test(days.value) ? "ics" : "csv";
  });
  days.addEventListener("input", () => { fileFormat = /^BEGIN:VCALENDAR/m.test(days.value) ? "ics" : "csv"; });
  if (cal) {
    app.value = cal.app;
    app.disabled = true;
    name.value = cal.name;
    name.disabled = true;
    desc.value = cal.description || "";
    week.value = cal.week;
    days.value = daysCSV(cal.days);
  } else if (!ctx.can("admin") && ctx.me.apps && ctx.me.apps.length === 1) {
    app.value = ctx.me.apps[0];
  }
  let saved = null;
  const v = await modal({
    title: cal ? t("calendars.editTitle", { name: cal.name }) : t("calendars.newTitle"), id: "calendar-dialog", wide: true,
    body: h("div", { class: "form-stack" },
      cal ? null : field("app", t("col.app"), app, t("calendars.appHelp")),
      cal ? null : field("name", t("col.name"), name, t("calendars.nameHelp")),
      field("description", t("calendars.description"), desc),
      field("week", t("calendars.week"), week, t("calendars.weekHelp")),
      field("import", t("calendars.days"), days, t("calendars.daysHelp")),
      h("div", { class: "field" }, h("label", { class: "field-label", for: file.id }, t("calendars.file")), file)),
    actions: [
      { label: t("common.cancel"), value: "cancel" },
      { label: cal ? t("calendars.save") : t("calendars.create"), kind: "primary", value: "ok", submit: true },
    ],
    onSubmit: async () => {
      setErrors({});
      const req = { app: app.value.trim(), name: name.value.trim(), description: desc.value.trim(), week: week.value.trim() };
      if (days.value.trim() !== "") req.import = { format: fileFormat, content: days.value };
      try {
        if (cal) {
          req.revision = cal.revision;
          saved = await api("PUT", `/calendars/${cal.id}`, req);
        } else {
          saved = await api("POST", "/calendars", req);
        }
      } catch (e) {
        // Errors about a single day (days[3].date) belong to the days box.
        const fields = {};
        for (const [k, m] of Object.entries(fieldTexts(e))) {
          const key = errs[k] ? k : k.startsWith("days") ? "import" : null;
          if (key) fields[key] = fields[key] ? fields[key] + "; " + m : m;
        }
        setErrors(fields);
        if (Object.keys(fields).length) throw new Error(t("common.checkFields"));
        throw e;
      }
      return "ok";
    },
  });
  if (v !== "ok") return null;
  toast(cal ? t("calendars.saved", { name: saved.name }) : t("calendars.created", { name: saved.name }));
  return saved;
}

/** monthGrid draws one month as a Monday-first table of day cells. */
function monthGrid(year, month, days, week, todayKey) {
  const first = new Date(Date.UTC(year, month - 1, 1));
  const count = new Date(Date.UTC(year, month, 0)).getUTCDate();
  const lead = (first.getUTCDay() + 6) % 7; // Monday-first
  const cells = [];
  for (let i = 0; i < lead; i++) cells.push(h("td", { class: "cal-pad" }));
  for (let d = 1; d <= count; d++) {
    const key = ymd(year, month, d);
    const kind = dayKind(key, days, week);
    const e = days.get(key);
    cells.push(h("td", {
      class: ["cal-day", "cal-" + kind, key === todayKey && "cal-today"],
      dataset: { date: key, kind }, title: e ? `${key} · ${t("calendars.kind." + e.kind)}${e.name ? " · " + e.name : ""}` : key,
    }, String(d)));
  }
  while (cells.length % 7) cells.push(h("td", { class: "cal-pad" }));
  const rows = [];
  for (let i = 0; i < cells.length; i += 7) rows.push(h("tr", {}, cells.slice(i, i + 7)));
  const monthName = new Intl.DateTimeFormat(getLang(), { month: "long", timeZone: "UTC" }).format(first);
  const dayHeads = [1, 2, 3, 4, 5, 6, 0].map(wd => {
    const label = new Intl.DateTimeFormat(getLang(), { weekday: "narrow", timeZone: "UTC" }).format(new Date(Date.UTC(2024, 0, 7 + wd)));
    return h("th", { class: week.has(wd) ? null : "cal-offhead" }, label);
  });
  return h("div", { class: "cal-month", dataset: { month: String(month) } },
    h("div", { class: "cal-month-name" }, monthName),
    h("table", { class: "cal-grid" }, h("thead", {}, h("tr", {}, dayHeads)), h("tbody", {}, rows)));
}

/** yearStats counts the working days and the entries of a year. */
function yearStats(year, days, week) {
  let work = 0, holidays = 0, workdays = 0;
  for (let m = 1; m <= 12; m++) {
    const n = new Date(Date.UTC(year, m, 0)).getUTCDate();
    for (let d = 1; d <= n; d++) {
      const k = dayKind(ymd(year, m, d), days, week);
      if (k === "work" || k === "workday") work++;
      if (k === "holiday") holidays++;
      if (k === "workday") workdays++;
    }
  }
  return { work, holidays, workdays };
}

/** detail is the year view of one calendar (#/calendars/{id}). */
function detail(root, ctx) {
  const id = Number(ctx.params.id);
  let cal = null;
  let year = Number(ctx.query.get("year")) || new Date().getUTCFullYear();
  const title = h("h1", {});
  const sub = h("div", { class: "page-sub" });
  const actions = h("div", { class: "page-actions" });
  const info = h("div");
  const yearLabel = h("strong", { id: "cal-year" });
  const stats = h("span", { class: "muted", id: "cal-year-stats" });
  const months = h("div", { class: "cal-year", id: "cal-months" });
  const list = h("tbody");
  const turn = d => { year += d; render(); };
  const legend = h("div", { class: "cal-legend" }, ["work", "off", "holiday", "workday"].map(k =>
    h("span", { class: "cal-legend-item" }, h("span", { class: ["cal-swatch", "cal-" + k] }), t("calendars.kind." + k))));
  root.append(h("div", { class: "breadcrumbs" }, h("a", { href: "#/calendars" }, t("nav.calendars")), h("span", {}, "/"), h("span", { id: "crumb" }, "#" + id)),
  h("div", { class: "page-head" }, h("div", { class: "page-title" }, title, sub), actions),
  card(t("calendars.definition"), info),
  card(null, [
    h("div", { class: "toolbar" },
      button("‹", { id: "cal-prev", title: t("calendars.prevYear"), onclick: () => turn(-1) }), yearLabel,
      button("›", { id: "cal-next", title: t("calendars.nextYear"), onclick: () => turn(1) }),
      h("div", { class: "spacer" }), stats),
    legend, months], { id: "cal-year-card" }),
  card(t("calendars.entries"), h("div", { class: "table-wrap" }, h("table", { class: "table", id: "cal-entries" },
    h("thead", {}, h("tr", {}, h("th", {}, t("calendars.date")), h("th", {}, t("calendars.kindCol")), h("th", {}, t("col.name")))), list))));

  function render() {
    if (!cal) return;
    const days = new Map((cal.days || []).map(d => [d.date, d]));
    const week = workingWeekdays(cal.week);
    yearLabel.textContent = String(year);
    const now = new Date();
    const todayKey = ymd(now.getFullYear(), now.getMonth() + 1, now.getDate());
    const st = yearStats(year, days, week);
    stats.textContent = t("calendars.yearStats", { work: st.work, holidays: st.holidays, workdays: st.workdays });
    fill(months, ...Array.from({ length: 12 }, (_, i) => monthGrid(year, i + 1, days, week, todayKey)));
    syncTable(list, (cal.days || []).filter(d => d.date.startsWith(year + "-")), d => d.date, [
      { class: "mono", sig: d => d.date, cell: d => d.date },
      { sig: d => d.kind, cell: d => h("span", { class: ["pill", d.kind === "holiday" ? "pill-bad" : "pill-ok"] }, t("calendars.kind." + d.kind)) },
      { sig: d => d.name || "", cell: d => d.name || "—" },
    ]);
  }

  async function refresh() {
    const c = await api("GET", `/calendars/${id}`);
    if (!ctx.isCurrent()) return;
    const first = !cal;
    cal = c;
    title.textContent = c.name;
    document.getElementById("crumb").textContent = c.name;
    fill(sub, appLabel(c), " ", c.description || "");
    fill(info, kv([
      [t("col.app"), c.app || t("calendars.global")],
      [t("calendars.week"), c.week],
      [t("calendars.counts"), t("calendars.countsValue", { holidays: c.holidays, workdays: c.workdays })],
      [t("calendars.version"), h("span", { class: "mono", title: t("calendars.versionHelp") }, c.version.slice(0, 12))],
      [t("col.updated"), [absTime(c.updated_at), " · ", c.updated_by]],
    ]));
    if (first) {
      fill(actions,
        h("a", { class: "btn btn-secondary", id: "cal-export", href: `/api/v1/calendars/${id}/export`, download: c.name + ".csv" }, icon("download"), h("span", {}, t("calendars.export"))),
        ctx.can("operator") ? button(t("calendars.edit"), { icon: "edit", id: "cal-edit", onclick: async () => {
          if (await calendarDialog(cal, ctx)) ctx.refreshNow();
        } }) : null);
      // Open on the first year with entries when the current one has none.
      if (!ctx.query.get("year") && c.days && c.days.length && !c.days.some(d => d.date.startsWith(year + "-"))) {
        year = Number(c.days[0].date.slice(0, 4));
      }
    }
    render();
  }
  return { refresh, interval: () => 30000 };
}

/** list is #/calendars. */
function list(root, ctx) {
  let cals = [];
  const tbody = h("tbody");
  const empty = h("div", { hidden: true }, emptyState(t("calendars.none"), t("calendars.noneSub")));
  const count = h("span", { class: "muted", id: "calendars-count" });
  const table = h("table", { class: "table", id: "calendars-table" },
    h("thead", {}, h("tr", {}, h("th", {}, t("col.name")), h("th", {}, t("col.app")), h("th", {}, t("calendars.week")),
      h("th", { class: "num" }, t("calendars.holidays")), h("th", { class: "num" }, t("calendars.workdays")),
      h("th", {}, t("col.updated")), h("th", { class: "actions-col" }, t("col.actions")))),
    tbody);
  const newBtn = ctx.can("operator") ? button(t("calendars.new"), { kind: "primary", icon: "plus", id: "new-calendar", onclick: async () => {
    const c = await calendarDialog(null, ctx);
    if (c) location.hash = `#/calendars/${c.id}`;
  } }) : null;
  root.append(pageHead(t("calendars.title"), t("calendars.sub"), newBtn),
    h("div", { class: "card" }, h("div", { class: "toolbar" }, h("div", { class: "spacer" }), count),
      h("div", { class: "table-wrap" }, table), empty));

  async function remove(c) {
    const ok = await confirmDialog({
      id: "calendar-delete-dialog", title: t("calendars.deleteTitle"), danger: true, confirmLabel: t("calendars.delete"),
      message: h("p", {}, t("calendars.deleteConfirm", { name: c.name })),
      onConfirm: () => api("DELETE", `/calendars/${c.id}`),
    });
    if (ok) { toast(t("calendars.deleted", { name: c.name })); ctx.refreshNow(); }
  }

  function render() {
    syncTable(tbody, cals, c => c.id, [
      { sig: c => c.name, cell: c => h("a", { href: `#/calendars/${c.id}`, class: "calendar-link" }, c.name) },
      { sig: c => c.app, cell: c => appLabel(c) },
      { class: "mono", sig: c => c.week, cell: c => c.week },
      { class: "num", sig: c => c.holidays, cell: c => String(c.holidays) },
      { class: "num", sig: c => c.workdays, cell: c => String(c.workdays) },
      { sig: c => c.updated_at, cell: c => absTime(c.updated_at) },
      { class: "actions-col", sig: c => c.revision, cell: c => h("div", { class: "row-actions" },
        ctx.can("operator") ? h("button", { type: "button", class: "btn btn-sm btn-danger-ghost", dataset: { act: "delete", calendar: c.name },
          onclick: () => remove(c) }, icon("trash"), h("span", {}, t("calendars.delete"))) : null) },
    ]);
    table.hidden = !cals.length;
    empty.hidden = !!cals.length;
    count.textContent = t("calendars.count", { n: cals.length });
  }

  async function refresh() {
    const res = await api("GET", "/calendars");
    if (!ctx.isCurrent()) return;
    cals = res.calendars.sort((a, b) => (a.app || "").localeCompare(b.app || "") || a.name.localeCompare(b.name));
    render();
  }
  return { refresh, interval: () => 30000 };
}

export default function mount(root, ctx) {
  return ctx.params.id ? detail(root, ctx) : list(root, ctx);
}
