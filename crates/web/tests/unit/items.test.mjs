// The page's item list (assets/items.js `ItemList`) in node, by the rules of the controller's
// `ItemList` (crates/control/src/items/list.rs): started, updated and completed items replace by
// id or are added at the end, deltas extend by id, removed items go, and the events that change
// which items there are ask for a new snapshot.
//
//   node --test tests/unit/
import { test } from "node:test";
import assert from "node:assert/strict";
import { ItemList } from "../../assets/items.js";

const text = (id, t, reasoning) => ({ id, turn: 0, kind: "assistant_text", text: t, ...(reasoning ? { reasoning } : {}) });
const ids = (list) => list.items().map((i) => i.id);

test("deltas extend by id and a completed item replaces the streamed one", () => {
  const list = new ItemList();
  assert.deepEqual(list.apply("item_started", { item: text("a", "") }), { item: "a" });
  list.apply("assistant_delta", { text: "hel", item_id: "a" });
  assert.deepEqual(list.apply("reasoning_delta", { text: "hm", item_id: "a" }), { extended: "a", text: "hm", reasoning: true });
  assert.deepEqual(list.get("a"), text("a", "hel", "hm"));
  list.apply("item_completed", { item: text("a", "hello") });
  assert.deepEqual(list.items(), [text("a", "hello")]);
  assert.deepEqual(list.apply("item_removed", { item_id: "a" }), { removed: "a" });
  assert.deepEqual(list.items(), []);
});

test("an item started twice is shown once, in its place", () => {
  const list = new ItemList([text("a", "x"), text("b", "y")]);
  list.apply("item_started", { item: text("a", "x") });
  list.apply("item_updated", { item: text("a", "z") });
  list.apply("item_started", { item: text("c", "w") });
  assert.deepEqual(ids(list), ["a", "b", "c"]);
  assert.equal(list.get("a").text, "z");
});

test("a delta for no item, another kind or without an id changes nothing", () => {
  const prompt = { id: "p", turn: 0, kind: "user_prompt", text: "go" };
  const list = new ItemList([prompt]);
  assert.equal(list.apply("assistant_delta", { text: "x", item_id: "gone" }), null);
  assert.equal(list.apply("assistant_delta", { text: "x", item_id: "p" }), null);
  assert.equal(list.apply("assistant_delta", { text: "x" }), null);
  assert.deepEqual(list.items(), [prompt]);
});

test("head changes, rewinds, undos, redos, compactions and a lag ask for a new snapshot", () => {
  const list = new ItemList();
  for (const t of ["head_changed", "rewound", "undone", "redone", "compacted", "lagged"]) {
    assert.deepEqual(list.apply(t, {}), { reload: true }, t);
  }
  for (const t of ["turn_started", "tool_call", "turn_finished", "notice"]) assert.equal(list.apply(t, {}), null, t);
});
