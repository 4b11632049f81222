// Users (admins only): every console user with role and app limit; create,
// change role, apps or password, delete. Field errors of the API appear
// next to their fields in the dialog.
import { api } from "../api.js";
import { t, tOr, fieldTexts } from "../i18n.js";
import { h, pageHead, syncTable, absTime, emptyState, modal, confirmDialog, toast, button, icon } from "../dom.js";

const ROLES = ["viewer", "operator", "admin"];

/** rolePill renders a role as the top bar does. */
export function rolePill(role) {
  return h("span", { class: ["role", "role-" + role] }, tOr("role." + role, role));
}

/** parseApps splits "a, b c" into ["a", "b", "c"]. */
function parseApps(s) {
  return s.split(/[\s,]+/).filter(Boolean);
}

/**
 * formField builds a labelled field with its error line; setErrors shows
 * the API's per-field messages (and clears the others).
 */
export function fieldSet() {
  const errs = {};
  const field = (name, label, el, help) => {
    const err = h("div", { class: "field-error", "data-error-for": name, id: "err-user-" + name, role: "alert" });
    errs[name] = err;
    return h("div", { class: "field", dataset: { field: name } },
      h("label", { class: "field-label", for: el.id }, label), el, err, help ? h("div", { class: "field-help" }, help) : null);
  };
  const setErrors = fields => {
    for (const [k, el] of Object.entries(errs)) {
      el.textContent = fields[k] || "";
      el.closest(".field").classList.toggle("has-error", !!fields[k]);
    }
  };
  return { field, setErrors, errs };
}

/** userDialog creates (user null) or edits a user; resolves true when saved. */
async function userDialog(user, me) {
  const { field, setErrors, errs } = fieldSet();
  const name = h("input", { id: "user-name", name: "username", autocomplete: "off", spellcheck: "false" });
  const pass = h("input", { id: "user-password", name: "password", type: "password", autocomplete: "new-password" });
  const role = h("select", { id: "user-role", name: "role" }, ROLES.map(r => h("option", { value: r }, tOr("role." + r, r))));
  const apps = h("input", { id: "user-apps", name: "apps", autocomplete: "off", spellcheck: "false", placeholder: "billing, search" });
  role.value = user ? user.role : "viewer";
  apps.value = user ? (user.apps || []).join(", ") : "";
  const self = user && user.username === me.username;
  if (self) role.disabled = true; // the API refuses taking admin from oneself
  const body = h("div", { class: "form-stack" },
    user ? h("p", { class: "muted" }, t("users.editIntro", { name: user.username })) : field("username", t("users.username"), name, t("users.usernameHelp")),
    field("password", user ? t("users.newPassword") : t("users.password"), pass, user ? t("users.newPasswordHelp") : t("users.passwordHelp")),
    field("role", t("col.role"), role, self ? t("users.selfRole") : t("users.roleHelp")),
    field("apps", t("col.apps"), apps, t("users.appsHelp")));
  const v = await modal({
    title: user ? t("users.editTitle", { name: user.username }) : t("users.newTitle"), body, id: "user-dialog",
    actions: [
      { label: t("common.cancel"), value: "cancel" },
      { label: user ? t("users.save") : t("users.create"), kind: "primary", value: "ok", submit: true },
    ],
    onSubmit: async () => {
      setErrors({});
      const req = { role: role.value, apps: parseApps(apps.value) };
      if (user) {
        if (self) delete req.role;
        if (pass.value !== "") req.password = pass.value;
      } else {
        req.username = name.value.trim();
        req.password = pass.value;
      }
      try {
        const u = user ? await api("PUT", `/users/${user.id}`, req) : await api("POST", "/users", req);
        toast(user ? t("users.saved", { name: u.username }) : t("users.created", { name: u.username }));
      } catch (e) {
        setErrors(fieldTexts(e));
        const first = Object.keys(e.fields || {}).find(k => errs[k]);
        if (first) {
          errs[first].closest(".field").querySelector("input, select").focus();
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
  if (!ctx.can("admin")) {
    root.append(pageHead(t("users.title")), h("div", { class: "callout callout-warn", id: "users-forbidden" }, t("users.forbidden")));
    return { refresh: async () => {}, interval: () => 0 };
  }
  let users = [];
  const tbody = h("tbody");
  const empty = h("div", { hidden: true }, emptyState(t("users.none")));
  const count = h("span", { class: "muted", id: "users-count" });
  const table = h("table", { class: "table", id: "users-table" },
    h("thead", {}, h("tr", {}, h("th", { class: "num" }, t("col.id")), h("th", {}, t("col.user")), h("th", {}, t("col.role")),
      h("th", {}, t("col.apps")), h("th", {}, t("col.created")), h("th", { class: "actions-col" }, t("col.actions")))),
    tbody);
  const newBtn = button(t("users.new"), { kind: "primary", icon: "plus", id: "new-user", onclick: async () => {
    if (await userDialog(null, ctx.me)) ctx.refreshNow();
  } });
  root.append(pageHead(t("users.title"), t("users.sub"), newBtn),
    h("div", { class: "card" }, h("div", { class: "toolbar" }, h("div", { class: "spacer" }), count),
      h("div", { class: "table-wrap" }, table), empty));

  async function remove(u) {
    const ok = await confirmDialog({
      id: "user-delete-dialog", title: t("users.deleteTitle"), danger: true, confirmLabel: t("users.delete"),
      message: h("p", {}, t("users.deleteConfirm", { name: u.username })),
      onConfirm: () => api("DELETE", `/users/${u.id}`),
    });
    if (ok) { toast(t("users.deleted", { name: u.username })); ctx.refreshNow(); }
  }

  function render() {
    syncTable(tbody, users, u => u.id, [
      { class: "num mono", sig: u => u.id, cell: u => String(u.id) },
      { sig: u => u.username + u.source + (u.refused || ""), cell: u => [h("span", { class: "user-name" }, u.username),
        u.username === ctx.me.username ? h("span", { class: "muted" }, " · ", t("users.you")) : null,
        u.source && u.source !== "local" ? h("span", { class: "app-tag source-tag", title: t("users.directoryManaged") }, u.source.toUpperCase()) : null,
        u.refused ? h("span", { class: "muted", title: u.refused }, " · ", t("users.refused")) : null] },
      { sig: u => u.role, cell: u => rolePill(u.role) },
      { sig: u => u.role + (u.apps || []).join(","), cell: u => u.role === "admin" || !(u.apps || []).length
        ? h("span", { class: "muted" }, t("users.allApps"))
        : h("div", { class: "chips chips-static" }, u.apps.map(a => h("span", { class: "app-tag" }, a))) },
      { sig: u => u.created_at, cell: u => absTime(u.created_at) },
      { class: "actions-col", sig: u => JSON.stringify(u), cell: u => h("div", { class: "row-actions" },
        h("button", { type: "button", class: "btn btn-sm btn-secondary", dataset: { act: "edit", user: u.username },
          disabled: u.source && u.source !== "local", title: u.source && u.source !== "local" ? t("users.directoryManaged") : null, onclick: async () => {
          if (await userDialog(u, ctx.me)) ctx.refreshNow();
        } }, icon("edit"), h("span", {}, t("users.edit"))),
        h("button", { type: "button", class: "btn btn-sm btn-danger-ghost", dataset: { act: "delete", user: u.username },
          disabled: u.username === ctx.me.username, title: u.username === ctx.me.username ? t("users.selfDelete") : null,
          onclick: () => remove(u) }, icon("trash"), h("span", {}, t("users.delete")))) },
    ]);
    table.hidden = !users.length;
    empty.hidden = !!users.length;
    count.textContent = t("users.count", { n: users.length });
  }

  async function refresh() {
    const res = await api("GET", "/users");
    if (!ctx.isCurrent()) return;
    users = res.users.sort((a, b) => a.username.localeCompare(b.username));
    render();
  }

  return { refresh, interval: () => 15000 };
}
