// The backfill dialog shared by a workflow's page and a job's page: a range
// of business dates, the parallelism, the order, "only dates without a
// succeeded run" and params; Preview asks the API for a dry run and lists
// each date with what it gets; Create creates exactly what was previewed
// (a change of the fields previews again first).
import { api } from "../api.js";
import { t, fmtDateTime, fieldTexts } from "../i18n.js";
import { fieldSet } from "./users.js";
import { h, fill, button, modal } from "../dom.js";

/**
 * backfillDialog asks for a backfill and creates it through POST path;
 * resolves the plan the API answered, or null when cancelled. id is the
 * dialog's element id, title and intro its texts; a job's plan lists each
 * date's run instant too (its scheduled_at).
 */
export async function backfillDialog({ id, title, intro, path }) {
  const { field, setErrors, errs } = fieldSet();
  const from = h("input", { id: "bf-from", name: "from", autocomplete: "off", placeholder: "YYYY-MM-DD" });
  const to = h("input", { id: "bf-to", name: "to", autocomplete: "off", placeholder: "YYYY-MM-DD" });
  const parallel = h("input", { id: "bf-parallel", name: "parallel", type: "number", min: 1, max: 20, value: "1" });
  const newest = h("input", { type: "checkbox", id: "bf-newest" });
  const missing = h("input", { type: "checkbox", id: "bf-missing" });
  const params = h("textarea", { id: "bf-params", name: "params", rows: 2, class: "mono", spellcheck: "false", placeholder: "{}" });
  const list = h("div", { id: "bf-plan", class: "bf-plan" });
  const preview = button(t("backfill.preview"), { id: "bf-preview" });
  let plan = null, previewed = "";
  const req = dry => {
    const r = { from: from.value.trim(), to: to.value.trim(), parallel: Number(parallel.value) || 1,
      newest_first: newest.checked, only_missing: missing.checked, dry_run: dry };
    if (params.value.trim()) r.params = params.value.trim();
    return r;
  };
  const send = async dry => {
    setErrors({});
    try {
      return await api("POST", path, req(dry));
    } catch (e) {
      const fields = fieldTexts(e);
      setErrors(fields);
      throw Object.keys(fields).some(k => errs[k]) ? new Error(t("common.checkFields")) : e;
    }
  };
  const show = p => {
    previewed = JSON.stringify(req(false));
    fill(list, h("p", { class: "muted", id: "bf-summary" }, t("backfill.summary", { dates: p.dates.length, created: p.created })),
      h("table", { class: "table table-compact" }, h("tbody", {}, p.dates.map(d => h("tr", { dataset: { date: d.date, action: d.action } },
        h("td", { class: "mono" }, d.date), d.scheduled_at ? h("td", { class: "mono muted" }, fmtDateTime(d.scheduled_at)) : null,
        h("td", {}, t("backfill.action." + d.action)))))));
  };
  preview.addEventListener("click", async () => {
    try { show(await send(true)); } catch (e) { fill(list, h("div", { class: "callout callout-bad" }, e.message)); }
  });
  const v = await modal({
    title, id, wide: true,
    body: h("div", { class: "form-stack" },
      h("p", { class: "muted" }, intro),
      h("div", { class: "form-row" }, field("from", t("backfill.from"), from), field("to", t("backfill.to"), to),
        field("parallel", t("backfill.parallel"), parallel, t("backfill.parallelHelp"))),
      h("label", { class: "check" }, newest, h("span", {}, t("backfill.newest"))),
      h("label", { class: "check" }, missing, h("span", {}, t("backfill.missing"))),
      field("params", t("field.params"), params, t("backfill.paramsHelp")),
      preview, list),
    actions: [{ label: t("common.cancel"), value: "cancel" }, { label: t("backfill.create"), kind: "primary", value: "ok", submit: true }],
    onSubmit: async () => {
      // What is created is what was previewed: preview again after a change.
      if (previewed !== JSON.stringify(req(false))) {
        show(await send(true));
        throw new Error(t("backfill.check"));
      }
      plan = await send(false);
      return "ok";
    },
  });
  return v === "ok" ? plan : null;
}
