// Personal API keys (/api/v1/api-keys; "token" in the element ids and
// message keys is their old name): the caller's own (admins may show everyone's),
// create with an optional role cap and expiry, revoke. The secret is shown
// once, in the dialog that follows the creation, and kept nowhere else.
import { api, qs, can } from "../api.js";
import { t, tOr, fieldTexts } from "../i18n.js";
import { h, pageHead, syncTable, absTime, relTime, emptyState, modal, confirmDialog, toast, button, pill, icon } from "../dom.js";
import { rolePill } from "./users.js";

let showAll = false;

/** copyText copies s to the clipboard; resolves true on success. */
async function copyText(s, input) {
  try {
    await navigator.clipboard.writeText(s);
    return true;
  } catch {
    // No clipboard API (plain HTTP on another host): select the text so
    // that Ctrl+C copies it.
    input.focus();
    input.select();
    return false;
  }
}

/** secretDialog shows a new token's secret, once. */
async function secretDialog(created) {
  const secret = h("input", { id: "token-secret", class: "mono secret-input", readonly: true, spellcheck: "false", "aria-label": t("tokens.secret") });
  secret.value = created.secret;
  const copied = h("span", { class: "muted", id: "token-copied", role: "status" });
  const copy = button(t("tokens.copy"), { icon: "copy", id: "token-copy", onclick: async () => {
    copied.textContent = await copyText(created.secret, secret) ? t("tokens.copied") : t("tokens.copyManually");
  } });
  secret.addEventListener("focus", () => secret.select());
  await modal({
    title: t("tokens.createdTitle", { name: created.token.name }), id: "token-secret-dialog", wide: true,
    body: h("div", { class: "form-stack" },
      h("div", { class: "callout callout-warn", id: "token-once" }, h("strong", {}, t("tokens.onceTitle")), " ", t("tokens.once")),
      h("div", { class: "secret-row" }, secret, copy),
      copied,
      h("p", { class: "muted" }, t("tokens.usage")),
      h("code", { class: "usage-code" }, "Authorization: Bearer ", created.token.prefix, "…")),
    actions: [{ label: t("tokens.done"), kind: "primary", value: "ok" }],
  });
  secret.value = "";
}

/** createDialog asks for name, role cap and expiry; resolves the created token or null. */
async function createDialog(me) {
  const errs = {};
  const field = (name, label, el, help) => {
    errs[name] = h("div", { class: "field-error", "data-error-for": name, id: "err-token-" + name, role: "alert" });
    return h("div", { class: "field", dataset: { field: name } },
      h("label", { class: "field-label", for: el.id }, label), el, errs[name], help ? h("div", { class: "field-help" }, help) : null);
  };
  const name = h("input", { id: "token-name", name: "name", autocomplete: "off", maxlength: 64, placeholder: t("tokens.namePlaceholder") });
  const role = h("select", { id: "token-role", name: "role" }, h("option", { value: "" }, t("tokens.noCap", { role: tOr("role." + me.role, me.role) })),
    ["viewer", "operator", "admin"].filter(r => can(me.role, r)).map(r => h("option", { value: r }, tOr("role." + r, r))));
  const days = h("input", { id: "token-days", name: "expires_in_days", type: "number", min: 1, max: 3650, placeholder: t("tokens.never") });
  // Defaults that suit automation: operator (or the user's own role if
  // lower) and 90 days; both can be changed, and emptied for no expiry.
  if (can(me.role, "operator")) role.value = "operator";
  days.value = "90";
  let created = null;
  const v = await modal({
    title: t("tokens.newTitle"), id: "token-dialog",
    body: h("div", { class: "form-stack" },
      field("name", t("col.name"), name, t("tokens.nameHelp")),
      field("role", t("col.roleCap"), role, t("tokens.roleHelp")),
      field("expires_in_days", t("tokens.days"), days, t("tokens.daysHelp"))),
    actions: [
      { label: t("common.cancel"), value: "cancel" },
      { label: t("tokens.create"), kind: "primary", value: "ok", submit: true },
    ],
    onSubmit: async () => {
      for (const el of Object.values(errs)) { el.textContent = ""; el.closest(".field").classList.remove("has-error"); }
      const req = { name: name.value.trim(), role: role.value };
      const raw = days.value.trim();
      if (raw !== "") {
        const n = Number(raw);
        if (!Number.isInteger(n)) {
          errs.expires_in_days.textContent = t("tokens.daysInteger");
          errs.expires_in_days.closest(".field").classList.add("has-error");
          throw new Error(t("common.checkFields"));
        }
        req.expires_in_days = n;
      }
      try {
        created = await api("POST", "/api-keys", req);
      } catch (e) {
        let shown = false;
        for (const [k, msg] of Object.entries(fieldTexts(e))) {
          if (!errs[k]) continue;
          errs[k].textContent = msg;
          errs[k].closest(".field").classList.add("has-error");
          shown = true;
        }
        throw shown ? new Error(t("common.checkFields")) : e;
      }
      return "ok";
    },
  });
  return v === "ok" ? created : null;
}

function stateKind(st) { return { active: "ok", expired: "warn", revoked: "muted" }[st] || "muted"; }

export default function mount(root, ctx) {
  const isAdmin = ctx.can("admin");
  let tokens = [];
  const tbody = h("tbody");
  const empty = h("div", { hidden: true });
  const count = h("span", { class: "muted", id: "tokens-count" });
  const allToggle = h("input", { type: "checkbox", id: "tokens-all" });
  allToggle.checked = isAdmin && showAll;
  allToggle.addEventListener("change", () => { showAll = allToggle.checked; tokens = []; buildHead(); ctx.refreshNow(); });
  const thead = h("thead");
  const table = h("table", { class: "table", id: "tokens-table" }, thead, tbody);
  const newBtn = button(t("tokens.new"), { kind: "primary", icon: "plus", id: "new-token", onclick: async () => {
    const created = await createDialog(ctx.me);
    if (!created) return;
    ctx.refreshNow();
    await secretDialog(created);
  } });
  root.append(pageHead(t("tokens.title"), t("tokens.sub"), newBtn),
    h("div", { class: "card" },
      h("div", { class: "toolbar" }, isAdmin ? h("label", { class: "check" }, allToggle, h("span", {}, t("tokens.all"))) : null, h("div", { class: "spacer" }), count),
      h("div", { class: "table-wrap" }, table), empty));

  const all = () => isAdmin && showAll;
  function buildHead() {
    thead.replaceChildren(h("tr", {}, h("th", {}, t("col.name")), all() ? h("th", {}, t("col.user")) : null, h("th", {}, t("col.prefix")),
      h("th", {}, t("col.roleCap")), h("th", {}, t("col.state")), h("th", {}, t("col.created")), h("th", {}, t("col.lastUsed")),
      h("th", {}, t("col.expires")), h("th", { class: "actions-col" }, t("col.actions"))));
    tbody.replaceChildren();
  }
  buildHead();

  async function revoke(tok) {
    let res = null;
    const ok = await confirmDialog({
      id: "token-revoke-dialog", title: t("tokens.revokeTitle"), danger: true, confirmLabel: t("tokens.revoke"),
      message: h("p", {}, t("tokens.revokeConfirm", { name: tok.name, prefix: tok.prefix })),
      onConfirm: async () => { res = await api("DELETE", `/api-keys/${tok.id}`); },
    });
    if (!ok) return;
    const n = (res && res.also_revoked || []).length;
    toast(n ? t("tokens.revokedWithChildren", { name: tok.name, n }) : t("tokens.revoked", { name: tok.name }));
    ctx.refreshNow();
  }

  /** parentName names the token that created another, by name when listed. */
  function parentName(id) {
    const p = tokens.find(x => x.id === id);
    return p ? p.name : "#" + id;
  }

  function render() {
    const cols = [
      { sig: x => x.name + (x.parent_id || ""), cell: x => [h("span", { class: "token-name" }, x.name),
        x.parent_id ? h("div", { class: "sub-line", dataset: { parent: x.parent_id } }, t("tokens.madeWith", { name: parentName(x.parent_id) })) : null] },
      all() ? { sig: x => x.user, cell: x => x.user } : null,
      { class: "mono", sig: x => x.prefix, cell: x => x.prefix + "…" },
      { sig: x => x.role_cap || "", cell: x => x.role_cap ? rolePill(x.role_cap) : h("span", { class: "muted" }, t("tokens.userRole")) },
      { sig: x => x.state, cell: x => pill(t("tokens.state." + x.state), stateKind(x.state)) },
      { sig: x => x.created_at, cell: x => absTime(x.created_at) },
      { sig: x => x.last_used_at || "", cell: x => relTime(x.last_used_at, { empty: t("tokens.neverUsed") }) },
      { sig: x => (x.expires_at || "") + x.state, cell: x => x.expires_at ? absTime(x.expires_at) : h("span", { class: "muted" }, t("tokens.never")) },
      { class: "actions-col", sig: x => x.state, cell: x => x.state === "active"
        ? button(t("tokens.revoke"), { size: "sm", kind: "danger-ghost", icon: "x", dataset: { act: "revoke", token: x.name }, onclick: () => revoke(x) })
        : x.revoked_at ? h("span", { class: "sub-line" }, relTime(x.revoked_at)) : null },
    ].filter(Boolean);
    syncTable(tbody, tokens, x => x.id, cols, x => ({ class: x.state === "active" ? "" : "row-dim" }));
    table.hidden = !tokens.length;
    empty.hidden = !!tokens.length;
    empty.replaceChildren(emptyState(t("tokens.none"), t("tokens.noneSub")));
    const active = tokens.filter(x => x.state === "active").length;
    count.textContent = t("tokens.count", { n: tokens.length, active });
  }

  async function refresh() {
    const wantAll = all();
    const res = await api("GET", "/api-keys" + qs({ all: wantAll ? "true" : "" }));
    if (!ctx.isCurrent() || wantAll !== all()) return;
    tokens = res.tokens.sort((a, b) => (a.state === "active" ? 0 : 1) - (b.state === "active" ? 0 : 1) || b.id - a.id);
    render();
  }

  return { refresh, interval: () => 10000 };
}
