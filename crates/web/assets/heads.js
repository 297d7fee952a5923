// The session's heads as a tree (the Versions panel). Each head is shown once: a head whose
// parent is missing is a root, and a head whose parents lead back to it (a damaged listing) is
// shown as a root with a warning instead of sending the tree round the loop.
import { el, button } from "./util.js";

/**
 * The heads (`GET …/heads`, listing order) as a forest of `{head, children, loop}`: every head
 * exactly once, under its `parent_head`, or at the top when that is null or unknown. Where parents
 * go round in a circle, the first head met on the circle is put at the top with `loop: true` and
 * the rest of the circle below it.
 */
export function headForest(heads) {
  const byId = new Map();
  for (const h of heads) if (!byId.has(h.id)) byId.set(h.id, h);
  const parentOf = (h) => (h.parent_head != null && byId.has(h.parent_head) ? h.parent_head : null);
  const children = new Map();
  for (const h of byId.values()) {
    const p = parentOf(h);
    if (!children.has(p)) children.set(p, []);
    children.get(p).push(h);
  }
  const placed = new Set();
  const grow = (h, loop) => {
    placed.add(h.id);
    const node = { head: h, children: [], loop };
    // a loop never comes back here: a head already placed is not placed again
    for (const c of children.get(h.id) ?? []) if (!placed.has(c.id)) node.children.push(grow(c, false));
    return node;
  };
  const forest = [];
  for (const h of children.get(null) ?? []) forest.push(grow(h, false));
  // Whatever is left hangs from a circle: walk up from it to the first head seen twice.
  for (const h of byId.values()) {
    if (placed.has(h.id)) continue;
    const seen = new Set();
    let at = h;
    while (!seen.has(at.id)) {
      seen.add(at.id);
      at = byId.get(parentOf(at)) ?? h; // (never a root: every head below one is placed)
    }
    forest.push(grow(at, true));
  }
  return forest;
}

/**
 * The tree's list: each head's name and facts, Switch and Retire for the heads not selected
 * (`actions.switchHead(id)`, `actions.retireHead(id)`; none when `actions` is null), its children
 * below it.
 */
export function headTree(heads, actions) {
  const list = (nodes) => {
    const ul = el("ul", "head-tree");
    for (const { head: h, children, loop } of nodes) {
      const li = el("li", `head${h.selected ? " selected" : ""}${h.retired ? " retired" : ""}`);
      li.dataset.head = h.id;
      // The controller's title (its name, or what it is and its turn's prompt); the id last.
      const name = h.name ?? (h.title || h.id);
      const row = el("div", "head-row",
        el("span", "head-name", name),
        el("span", "head-meta", ` ${h.message_count} ${h.message_count === 1 ? "message" : "messages"}${h.id !== name ? ` · ${h.id}` : ""}${h.selected ? " · selected" : ""}${h.retired ? " · retired" : ""}`),
      );
      row.tabIndex = -1; // the focus lands here after a switch to this head
      li.append(row);
      if (loop) {
        const why = h.parent_head === h.id ? "it names itself as its parent" : `its parent ${h.parent_head} leads back to it`;
        const w = el("div", "head-loop warn", `Damaged head list: ${why}.`);
        w.setAttribute("role", "note");
        li.append(w);
      }
      if (!h.selected && actions) {
        const buttons = el("div", "head-actions");
        buttons.append(button("Switch", () => actions.switchHead(h.id)));
        if (!h.retired) buttons.append(button("Retire", () => actions.retireHead(h.id), "danger"));
        li.append(buttons);
      }
      if (children.length) li.append(list(children));
      ul.append(li);
    }
    return ul;
  };
  return list(headForest(heads));
}
