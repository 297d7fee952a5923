// The session's items as the page holds them: a snapshot's (`GET …/{id}?include=items`), then
// changed by the events numbered after it, by the rules of the controller's `ItemList`
// (crates/control/src/items/list.rs): every frontend shows the same thing. No page here: the unit
// tests import it in node.

/** The events after which the items are read again (another head, a rewind, an undo or redo, a compaction). */
export const RELOAD_EVENTS = ["head_changed", "rewound", "undone", "redone", "compacted", "lagged"];

/** A session's items, in order, by id. */
export class ItemList {
  constructor(items = []) {
    this.byId = new Map();
    for (const i of items) this.byId.set(i.id, i);
  }

  /** The items, in order. */
  items() {
    return [...this.byId.values()];
  }

  /** The item with this id. */
  get(id) {
    return this.byId.get(id);
  }

  /**
   * Applies one event of type `type` published after the snapshot. What it did:
   * `{item: id}` (added or changed), `{removed: id}`, `{extended: id, text, reasoning}` (a delta
   * appended to an assistant text), `{reload: true}` (take a new snapshot), or null (nothing shown
   * changed).
   */
  apply(type, ev) {
    switch (type) {
      case "item_started":
      case "item_updated":
      case "item_completed":
        // a map keeps an id's place when it is set again, and adds a new one at the end
        this.byId.set(ev.item.id, ev.item);
        return { item: ev.item.id };
      case "item_removed":
        this.byId.delete(ev.item_id);
        return { removed: ev.item_id };
      case "assistant_delta":
      case "reasoning_delta":
        return this.extend(ev.item_id, ev.text, type === "reasoning_delta");
      default:
        return RELOAD_EVENTS.includes(type) ? { reload: true } : null;
    }
  }

  extend(id, text, reasoning) {
    const item = id == null ? undefined : this.byId.get(id);
    if (item?.kind !== "assistant_text") return null;
    if (reasoning) item.reasoning = (item.reasoning ?? "") + text;
    else item.text += text;
    return { extended: id, text, reasoning };
  }
}
