// Alarm routes of one job: which alarm channels (and email recipients)
// get its alarms on top of the default channels. Shown on the job page;
// operators edit them.
import { api } from "../api.js";
import { t, fieldTexts } from "../i18n.js";
import { h, card, modal, toast, fill } from "../dom.js";

/** alarmRoutesCard returns the card and a function that (re)loads it. */
export function alarmRoutesCard(jobId, ctx) {
  const body = h("div", { id: "alarm-routes" });
  const edit = ctx.can("operator") ? h("button", { type: "button", class: "btn btn-sm btn-secondary", id: "alarm-routes-edit" }, t("routes.edit")) : null;
  let routes = [];
  async function load() {
    try {
      routes = (await api("GET", `/jobs/${jobId}/alarm-routes`)).routes || [];
    } catch (e) { fill(body, h("p", { class: "muted" }, e.message)); return; }
    fill(body, routes.length
      ? h("ul", { class: "route-list" }, routes.map(r => h("li", {}, h("code", {}, r.channel), r.recipient ? [" → ", h("span", { class: "mono" }, r.recipient)] : null)))
      : h("p", { class: "muted" }, t("routes.none")));
  }
  if (edit) edit.addEventListener("click", async () => {
    const text = h("textarea", { id: "alarm-routes-text", rows: 5, class: "mono", spellcheck: "false" });
    text.value = routes.map(r => r.recipient ? `${r.channel} ${r.recipient}` : r.channel).join("\n");
    const err = h("div", { class: "field-error", id: "alarm-routes-error" });
    const v = await modal({
      title: t("routes.title"), id: "alarm-routes-dialog",
      body: h("div", { class: "form-stack" }, h("p", { class: "muted" }, t("routes.help")), text, err),
      actions: [
        { label: t("common.cancel"), value: "cancel" },
        { label: t("routes.save"), kind: "primary", value: "ok", submit: true },
      ],
      onSubmit: async () => {
        err.textContent = "";
        const want = text.value.split("\n").map(l => l.trim()).filter(Boolean).map(l => {
          const [channel, recipient] = l.split(/\s+/, 2);
          return recipient ? { channel, recipient } : { channel };
        });
        try {
          await api("PUT", `/jobs/${jobId}/alarm-routes`, { routes: want });
        } catch (e) {
          err.textContent = Object.entries(fieldTexts(e)).map(([k, m]) => `${k}: ${m}`).join("\n") || e.message;
          throw e;
        }
        return "ok";
      },
    });
    if (v === "ok") { toast(t("routes.saved")); load(); }
  });
  return { el: card(t("routes.card"), body, { sub: t("routes.sub"), actions: edit }), load };
}
