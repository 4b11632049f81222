// Actions on one job shared by the job list and the job page: trigger
// (with params and an optional backfill instant), pause/resume,
// enable/disable and delete, each behind the role check of the caller.
import { api } from "../api.js";
import { t, isUTC, zoneLabel, warningTexts, fieldTexts } from "../i18n.js";
import { h, modal, confirmDialog, toast, icon } from "../dom.js";

/**
 * jobState is the job's state in the API's words (Job.state, the names of
 * docs/architecture.md): "scheduled" (it fires), "paused", "disabled" or
 * "completed" (past end_at, max_runs reached, @at fired). The CLI's STATE
 * column says the same.
 */
export function jobState(j) {
  if (j.state) return j.state;
  if (!j.enabled) return "disabled";
  return j.paused ? "paused" : "scheduled";
}

/** STATE_PILL is the pill colour of each job state. */
export const STATE_PILL = { scheduled: "ok", paused: "warn", disabled: "muted", completed: "muted" };

/** triggerDialog asks for params and triggers; navigates to the new run. */
export async function triggerDialog(job, ctx) {
  const params = h("textarea", { id: "trigger-params", name: "params", rows: 4, class: "mono", spellcheck: "false" });
  params.value = job.params || "";
  const backfill = h("input", { type: "checkbox", id: "trigger-backfill" });
  const at = h("input", { type: "datetime-local", id: "trigger-at", step: 1, disabled: true });
  backfill.addEventListener("change", () => { at.disabled = !backfill.checked; if (backfill.checked) at.focus(); });
  const body = h("div", { class: "form-stack" },
    h("p", { class: "muted" }, t("trigger.intro", { name: `${job.app}/${job.name}`, slots: job.slots })),
    // A disabled, paused or completed job does not fire on its schedule,
    // but a run triggered here runs (only scheduled runs are skipped).
    jobState(job) !== "scheduled" ? h("p", { class: "callout callout-warn", id: "trigger-state", dataset: { state: jobState(job) } }, t("trigger.state." + jobState(job))) : null,
    h("label", { class: "field" }, h("span", { class: "field-label" }, t("field.params")), params,
      h("span", { class: "field-help" }, t("trigger.paramsHelp"))),
    h("label", { class: "check" }, backfill, h("span", {}, t("trigger.backfillAt"))),
    h("label", { class: "field" }, h("span", { class: "field-label" }, t("trigger.at", { zone: zoneLabel() })), at,
      h("span", { class: "field-help" }, t("trigger.atHelp"))));
  let result = null;
  const v = await modal({
    title: t("trigger.title"), body, id: "trigger-dialog",
    actions: [
      { label: t("common.cancel"), value: "cancel" },
      { label: t("trigger.submit"), kind: "primary", value: "ok", submit: true },
    ],
    onSubmit: async () => {
      const req = { params: params.value };
      if (backfill.checked) {
        if (!at.value) throw new Error(t("trigger.atRequired"));
        req.scheduled_at = viewerInstant(at.value).toISOString();
      }
      result = await api("POST", `/jobs/${job.id}/trigger`, req);
      return "ok";
    },
  });
  if (v !== "ok" || !result) return null;
  toast(result.created ? t("trigger.done", { id: result.run.id }) : t("trigger.exists", { id: result.run.id }), result.created ? "ok" : "info");
  ctx.navigate("#/runs/" + result.run.id);
  return result.run;
}

/**
 * viewerInstant is the instant of a datetime-local value ("2026-12-24T18:00"
 * or with seconds) read in the viewer's zone: UTC when the console shows
 * UTC, else the browser's zone (zoneLabel names it).
 */
function viewerInstant(value) {
  const [d, tm] = value.split("T");
  const [y, mo, da] = d.split("-").map(Number);
  const [hh, mi, ss] = (tm + ":00:00").split(":").map(Number);
  return isUTC() ? new Date(Date.UTC(y, mo - 1, da, hh, mi, ss || 0)) : new Date(y, mo - 1, da, hh, mi, ss || 0);
}

/**
 * pauseDialog pauses a job until it is resumed, or until an instant the
 * viewer picks in their zone (POST /jobs/{id}/pause {"until": ...}); the
 * API's error about until shows under the field.
 */
export async function pauseDialog(job, after) {
  const forever = h("input", { type: "radio", name: "pause-kind", id: "pause-forever", value: "forever", checked: true });
  const timed = h("input", { type: "radio", name: "pause-kind", id: "pause-timed", value: "until" });
  const until = h("input", { type: "datetime-local", id: "pause-until", name: "until", step: 1, disabled: true });
  const untilErr = h("span", { class: "field-error", id: "pause-until-error" });
  const sync = () => { until.disabled = !timed.checked; if (timed.checked) until.focus(); };
  forever.addEventListener("change", sync);
  timed.addEventListener("change", sync);
  let saved = null;
  const v = await modal({
    title: t("pause.title", { name: `${job.app}/${job.name}` }), id: "pause-dialog",
    body: h("div", { class: "form-stack" },
      h("p", { class: "muted" }, t("pause.intro")),
      h("label", { class: "check" }, forever, h("span", {}, t("pause.forever"))),
      h("label", { class: "check" }, timed, h("span", {}, t("pause.timed"))),
      h("label", { class: "field" }, h("span", { class: "field-label" }, t("pause.until", { zone: zoneLabel() })), until,
        h("span", { class: "field-help" }, t("pause.untilHelp")), untilErr)),
    actions: [
      { label: t("common.cancel"), value: "cancel" },
      { label: t("job.pause"), kind: "primary", value: "ok", submit: true },
    ],
    onSubmit: async () => {
      untilErr.textContent = "";
      let req;
      if (timed.checked) {
        if (!until.value) { untilErr.textContent = t("pause.untilRequired"); throw new Error(t("pause.untilRequired")); }
        req = { until: viewerInstant(until.value).toISOString() };
      }
      try {
        saved = await api("POST", `/jobs/${job.id}/pause`, req);
      } catch (e) {
        untilErr.textContent = fieldTexts(e).until || "";
        throw e;
      }
      return "ok";
    },
  });
  if (v !== "ok" || !saved) return null;
  toast(t("job.paused", { name: job.name }));
  if (after) after(saved);
  return saved;
}

async function simple(job, action, okKey, after) {
  try {
    const j = await api("POST", `/jobs/${job.id}/${action}`);
    toast(t(okKey, { name: job.name }));
    if (after) after(j);
  } catch (e) { toast(e.message, "error"); }
}

export const resumeJob = (job, after) => simple(job, "resume", "job.resumed", after);
export const enableJob = (job, after) => simple(job, "enable", "job.enabled", after);
export const disableJob = (job, after) => simple(job, "disable", "job.disabled", after);

/**
 * deleteJob confirms and deletes. Returns true when deleted. A job with a
 * running run is not deleted (409 job.delete_running): the dialog stays
 * open with the API's reason, and leads to the job's running runs.
 */
export async function deleteJob(job) {
  const ok = await confirmDialog({
    id: "delete-dialog",
    title: t("job.deleteTitle"),
    message: h("div", { class: "form-stack" },
      h("p", {}, t("job.deleteConfirm", { name: `${job.app}/${job.name}` })),
      h("p", { class: "callout callout-warn", id: "delete-history" }, t("job.deleteWarn"))),
    confirmLabel: t("job.delete"), danger: true,
    onConfirm: async () => {
      try {
        await api("DELETE", `/jobs/${job.id}`);
      } catch (e) {
        const f = fieldTexts(e);
        throw new Error(f.id || e.message);
      }
    },
  });
  if (ok) toast(t("job.deleted", { name: job.name }));
  return ok;
}

/** cloneDialog asks for the copy's name and app, clones (disabled) and opens the copy. */
export async function cloneDialog(job, ctx) {
  const name = h("input", { id: "clone-name", name: "name", value: job.name + "-copy", spellcheck: "false" });
  const app = h("input", { id: "clone-app", name: "app", value: job.app, spellcheck: "false" });
  const nameErr = h("span", { class: "field-error", id: "clone-name-error" });
  const appErr = h("span", { class: "field-error" });
  let copy = null;
  const v = await modal({
    title: t("clone.title", { name: `${job.app}/${job.name}` }), id: "clone-dialog",
    body: h("div", { class: "form-stack" },
      h("p", { class: "muted" }, t("clone.intro")),
      h("label", { class: "field" }, h("span", { class: "field-label" }, t("field.name")), name, nameErr),
      h("label", { class: "field" }, h("span", { class: "field-label" }, t("field.app")), app, appErr)),
    actions: [
      { label: t("common.cancel"), value: "cancel" },
      { label: t("clone.submit"), kind: "primary", value: "ok", submit: true },
    ],
    onSubmit: async () => {
      nameErr.textContent = appErr.textContent = "";
      try {
        copy = await api("POST", `/jobs/${job.id}/clone`, { name: name.value.trim(), app: app.value.trim() });
      } catch (e) {
        const f = fieldTexts(e);
        nameErr.textContent = f.name || "";
        appErr.textContent = f.app || "";
        throw e;
      }
      return "ok";
    },
  });
  if (v !== "ok" || !copy) return null;
  toast(t("clone.done", { name: `${copy.app}/${copy.name}` }));
  for (const w of warningTexts(copy)) toast(w, "warn");
  ctx.navigate("#/jobs/" + copy.id);
  return copy;
}

/**
 * actionButtons returns the buttons for a job: trigger, pause/resume and a
 * menu with edit, enable/disable and delete. Empty for viewers.
 */
export function actionButtons(job, ctx, onChange, opts = {}) {
  if (!ctx.can("operator")) return [];
  const st = jobState(job);
  const btn = (label, ic, cls, fn, name) => h("button", { type: "button", class: ["btn", "btn-sm", cls], dataset: { act: name }, onclick: ev => { ev.stopPropagation(); fn(ev.currentTarget); } }, icon(ic), h("span", {}, label));
  const trig = btn(t("job.trigger"), "bolt", "btn-primary", () => triggerDialog(job, ctx), "trigger");
  const pr = st === "paused"
    ? btn(t("job.resume"), "play", "btn-secondary", () => resumeJob(job, onChange), "resume")
    : btn(t("job.pause"), "pause", "btn-secondary", () => pauseDialog(job, onChange), "pause");
  if (st === "disabled") pr.disabled = true;
  const items = [
    h("a", { href: `#/jobs/${job.id}/edit`, class: "menu-item", dataset: { act: "edit" } }, icon("edit"), t("job.edit")),
    h("button", { type: "button", class: "menu-item", dataset: { act: "clone" }, onclick: () => cloneDialog(job, ctx) }, icon("edit"), t("clone.action")),
    st === "disabled"
      ? h("button", { type: "button", class: "menu-item", dataset: { act: "enable" }, onclick: () => enableJob(job, onChange) }, icon("power"), t("job.enable"))
      : h("button", { type: "button", class: "menu-item", dataset: { act: "disable" }, onclick: () => disableJob(job, onChange) }, icon("power"), t("job.disable")),
    h("div", { class: "menu-sep" }),
    h("button", { type: "button", class: "menu-item danger", dataset: { act: "delete" }, onclick: async () => { if (await deleteJob(job) && onChange) onChange(null); } }, icon("trash"), t("job.delete")),
  ];
  if (opts.inline) {
    return [trig, pr,
      h("a", { href: `#/jobs/${job.id}/edit`, class: "btn btn-sm btn-secondary", dataset: { act: "edit" } }, icon("edit"), h("span", {}, t("job.edit"))),
      btn(t("clone.action"), "edit", "btn-secondary", () => cloneDialog(job, ctx), "clone"),
      st === "disabled" ? btn(t("job.enable"), "power", "btn-secondary", () => enableJob(job, onChange), "enable") : btn(t("job.disable"), "power", "btn-secondary", () => disableJob(job, onChange), "disable"),
      btn(t("job.delete"), "trash", "btn-danger-ghost", async () => { if (await deleteJob(job) && onChange) onChange(null); }, "delete")];
  }
  const pop = h("div", { class: "menu-pop" }, items);
  const menu = h("details", { class: "menu" }, h("summary", { class: "btn btn-sm btn-secondary icon-only", "aria-label": t("common.more"), title: t("common.more") }, icon("more")), pop);
  // The pop-up is fixed to the viewport so that a scrolling table does not
  // clip it; it opens upwards when there is no room below.
  menu.addEventListener("toggle", () => {
    if (!menu.open) return;
    const r = menu.getBoundingClientRect();
    const ph = pop.offsetHeight || 120;
    const below = r.bottom + 4 + ph < window.innerHeight;
    pop.style.setProperty("top", (below ? r.bottom + 4 : r.top - 4 - ph) + "px");
    pop.style.setProperty("left", Math.max(8, r.right - (pop.offsetWidth || 170)) + "px");
  });
  return [trig, pr, menu];
}

// Close open menus on outside click or Escape.
document.addEventListener("click", ev => {
  for (const d of document.querySelectorAll("details.menu[open]")) if (!d.contains(ev.target) || ev.target.closest(".menu-item")) d.open = false;
});
window.addEventListener("scroll", () => { for (const d of document.querySelectorAll("details.menu[open]")) d.open = false; }, true);
document.addEventListener("keydown", ev => {
  if (ev.key === "Escape") for (const d of document.querySelectorAll("details.menu[open]")) d.open = false;
});
