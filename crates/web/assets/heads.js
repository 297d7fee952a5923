// The session's heads as a tree (the Versions panel): each head under its parent, a head whose
// parent is missing at the top.
import { el, button } from "./util.js";

/**
 * The tree's list: each head's name and facts, Switch and Retire for the heads not selected
 * (`actions.switchHead(id)`, `actions.retireHead(id)`), its children below it.
 */
export function headTree(heads, actions) {
  const children = new Map();
  const ids = new Set(heads.map((h) => h.id));
  for (const h of heads) {
    const p = h.parent_head && ids.has(h.parent_head) ? h.parent_head : null;
    if (!children.has(p)) children.set(p, []);
    children.get(p).push(h);
  }
  const tree = (parent) => {
    const ul = el("ul", "head-tree");
    for (const h of children.get(parent) ?? []) {
      const li = el("li", `head${h.selected ? " selected" : ""}${h.retired ? " retired" : ""}`);
      li.dataset.head = h.id;
      const name = h.name ? `${h.name}` : h.id;
      const row = el("div", "head-row",
        el("span", "head-name", name),
        el("span", "head-meta", ` ${h.kind} · ${h.message_count} messages${h.selected ? " · selected" : ""}${h.retired ? " · retired" : ""}`),
      );
      row.tabIndex = -1; // the focus lands here after a switch to this head
      li.append(row);
      if (!h.selected) {
        const buttons = el("div", "head-actions");
        buttons.append(button("Switch", () => actions.switchHead(h.id)));
        if (!h.retired) buttons.append(button("Retire", () => actions.retireHead(h.id), "danger"));
        li.append(buttons);
      }
      if (children.has(h.id)) li.append(tree(h.id));
      ul.append(li);
    }
    return ul;
  };
  return tree(null);
}
