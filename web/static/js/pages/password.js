// The signed-in user's own password: a dialog opened from the top bar
// (POST /me/password). The API ends every session of the user on success,
// so the console signs in again afterwards.
import { api } from "../api.js";
import { t, fieldTexts } from "../i18n.js";
import { h, modal } from "../dom.js";
import { fieldSet } from "./users.js";

/** passwordDialog asks for the current and a new password (twice);
 * resolves true once the password was changed. */
export async function passwordDialog() {
  const { field, setErrors, errs } = fieldSet();
  const old = h("input", { id: "pw-old", name: "old", type: "password", autocomplete: "current-password", required: true });
  const next = h("input", { id: "pw-new", name: "new", type: "password", autocomplete: "new-password", required: true });
  const again = h("input", { id: "pw-again", name: "again", type: "password", autocomplete: "new-password", required: true });
  const body = h("div", { class: "form-stack" },
    field("old", t("password.old"), old),
    field("new", t("password.new"), next, t("password.newHelp")),
    field("again", t("password.again"), again, t("password.endsSessions")));
  const v = await modal({
    title: t("password.title"), body, id: "password-dialog",
    actions: [
      { label: t("common.cancel"), value: "cancel" },
      { label: t("password.change"), kind: "primary", value: "ok", submit: true },
    ],
    onSubmit: async () => {
      setErrors({});
      if (next.value !== again.value) {
        setErrors({ again: t("password.mismatch") });
        again.focus();
        throw new Error(t("common.checkFields"));
      }
      try {
        await api("POST", "/me/password", { old: old.value, new: next.value });
      } catch (e) {
        setErrors(fieldTexts(e));
        const first = Object.keys(e.fields || {}).find(k => errs[k]);
        if (first) {
          errs[first].closest(".field").querySelector("input").focus();
          throw new Error(t("common.checkFields"));
        }
        throw e;
      }
      return "ok";
    },
  });
  return v === "ok";
}
