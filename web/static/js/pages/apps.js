// Apps (docs/tenancy.md): the apps the user may see, each with its jobs,
// its executors online and in all, its owners and its description. Admins
// create apps; admins and an app's operators describe it. Field errors of
// the API appear next to their fields in the dialog.
import { api } from "../api.js";
import { t, fieldTexts } from "../i18n.js";
import { h, pageHead, syncTable, emptyState, modal, toast, button, icon } from "../dom.js";
import { fieldSet } from "./users.js";

/** parseOwners splits "a, b c" into ["a", "b", "c"]. */
function parseOwners(s) {
  return s.split(/[\s,]+/).filter(Boolean);
}

const QUOTAS = ["max_jobs", "max_slots_per_run", "max_backfill_parallel", "max_running_slots", "max_starts_per_second", "max_log_bytes_per_day"];

/** quotaText says an app's quotas in one line ("" for none). */
function quotaText(a) {
  const parts = QUOTAS.filter(q => a[q] != null).map(q => t("apps.q." + q, { n: a[q] }));
  if (a.weight > 1) parts.push(t("apps.q.weight", { n: a.weight }));
  return parts.join(" · ");
}

/** appDialog creates (app null) or describes an app; resolves true when
 * saved. Admins also set its quotas (empty: no limit). */
async function appDialog(app, isAdmin) {
  const { field, setErrors, errs } = fieldSet();
  const name = h("input", { id: "app-name", name: "name", autocomplete: "off", spellcheck: "false" });
  const desc = h("textarea", { id: "app-description", name: "description", rows: 3 });
  const owners = h("input", { id: "app-owners", name: "owners", autocomplete: "off", spellcheck: "false", placeholder: "bill, finance-oncall@example.com" });
  desc.value = app ? app.description : "";
  owners.value = app ? app.owners.join(", ") : "";
  const quotas = {};
  for (const q of QUOTAS) {
    quotas[q] = h("input", { id: "app-" + q.replaceAll("_", "-"), name: q, type: "number", min: 0, placeholder: t("apps.noLimit") });
    if (app && app[q] != null) quotas[q].value = String(app[q]);
  }
  const weight = h("input", { id: "app-weight", name: "weight", type: "number", min: 1, max: 1000, placeholder: "1" });
  weight.value = app ? String(app.weight || 1) : "1";
  const body = h("div", { class: "form-stack" },
    app ? h("p", { class: "muted" }, t("apps.editIntro", { name: app.name })) : field("name", t("apps.name"), name, t("apps.nameHelp")),
    field("description", t("apps.description"), desc),
    field("owners", t("apps.owners"), owners, t("apps.ownersHelp")),
    isAdmin ? QUOTAS.map(q => field(q, t("apps.f." + q), quotas[q], q === "max_jobs" ? t("apps.quotaHelp") : null)) : null,
    isAdmin ? field("weight", t("apps.f.weight"), weight, t("apps.weightHelp")) : null);
  const v = await modal({
    title: app ? t("apps.editTitle", { name: app.name }) : t("apps.newTitle"), body, id: "app-dialog",
    actions: [
      { label: t("common.cancel"), value: "cancel" },
      { label: app ? t("apps.save") : t("apps.create"), kind: "primary", value: "ok", submit: true },
    ],
    onSubmit: async () => {
      setErrors({});
      const req = { description: desc.value, owners: parseOwners(owners.value) };
      if (isAdmin) {
        for (const q of QUOTAS) req[q] = quotas[q].value === "" ? 0 : Number(quotas[q].value);
        req.weight = weight.value === "" ? 1 : Number(weight.value);
      }
      try {
        const a = app ? await api("PATCH", `/apps/${encodeURIComponent(app.name)}`, { ...req, version: app.version })
          : await api("POST", "/apps", { ...req, name: name.value.trim() });
        toast(app ? t("apps.saved", { name: a.name }) : t("apps.created", { name: a.name }));
      } catch (e) {
        setErrors(fieldTexts(e));
        const first = Object.keys(e.fields || {}).find(k => errs[k]);
        if (first) {
          errs[first].closest(".field").querySelector("input, textarea").focus();
          throw new Error(t("common.checkFields"));
        }
        throw e;
      }
      return "ok";
    },
  });
  return v === "ok";
}

export default function mount(root, ctx) {
  let apps = [];
  const tbody = h("tbody");
  const empty = h("div", { hidden: true }, emptyState(t("apps.none")));
  const count = h("span", { class: "muted", id: "apps-count" });
  const table = h("table", { class: "table", id: "apps-table" },
    h("thead", {}, h("tr", {}, h("th", {}, t("col.app")), h("th", { class: "num" }, t("apps.jobs")), h("th", { class: "num" }, t("apps.executors")),
      h("th", {}, t("apps.owners")), h("th", {}, t("apps.quotas")), h("th", {}, t("apps.description")), h("th", { class: "actions-col" }, t("col.actions")))),
    tbody);
  const newBtn = ctx.can("admin") ? button(t("apps.new"), { kind: "primary", icon: "plus", id: "new-app", onclick: async () => {
    if (await appDialog(null, true)) ctx.refreshNow();
  } }) : null;
  root.append(pageHead(t("apps.title"), t("apps.sub"), newBtn),
    h("div", { class: "card" }, h("div", { class: "toolbar" }, h("div", { class: "spacer" }), count),
      h("div", { class: "table-wrap" }, table), empty));

  function render() {
    syncTable(tbody, apps, a => a.name, [
      { sig: a => a.name, cell: a => h("span", { class: "app-tag", dataset: { app: a.name } }, a.name) },
      { class: "num mono", sig: a => a.jobs, cell: a => String(a.jobs) },
      { class: "num mono", sig: a => `${a.executors_online}/${a.executors}`, cell: a => `${a.executors_online}/${a.executors}` },
      { sig: a => a.owners.join(","), cell: a => a.owners.length ? h("div", { class: "chips chips-static" }, a.owners.map(o => h("span", { class: "app-tag" }, o)))
        : h("span", { class: "muted" }, "—") },
      { sig: a => quotaText(a), cell: a => quotaText(a) ? h("span", { class: "app-quotas" }, quotaText(a)) : h("span", { class: "muted" }, t("apps.noLimit")) },
      { sig: a => a.description, cell: a => a.description ? h("span", { class: "app-description" }, a.description) : h("span", { class: "muted" }, t("apps.undescribed")) },
      { class: "actions-col", sig: a => JSON.stringify(a), cell: a => ctx.can("operator") ? h("div", { class: "row-actions" },
        h("button", { type: "button", class: "btn btn-sm btn-secondary", dataset: { act: "edit", app: a.name }, onclick: async () => {
          if (await appDialog(a, ctx.can("admin"))) ctx.refreshNow();
        } }, icon("edit"), h("span", {}, t("apps.edit")))) : null },
    ]);
    table.hidden = !apps.length;
    empty.hidden = !!apps.length;
    count.textContent = t("apps.count", { n: apps.length });
  }

  async function refresh() {
    const res = await api("GET", "/apps");
    if (!ctx.isCurrent()) return;
    apps = res.apps;
    render();
  }

  return { refresh, interval: () => 15000 };
}
