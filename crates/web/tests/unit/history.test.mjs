// A file's history as the page words it (assets/history.js) in node: what each version is, its
// state and time, why one cannot be restored, and the table's restore buttons (one per restorable
// version, none for the others).
//
//   node --test tests/unit/
import { test } from "node:test";
import assert from "node:assert/strict";
import { click, within } from "./dom.mjs";

const { historyTable, versionState, versionTime, versionWhat, versionWhyNot } = await import("../../assets/history.js");

const v = (origin, turn, more) => ({ version: 1, origin, turn, time: null, sha256: null, size: null, existed: true, restorable: true, ...more });

test("what each version is, from its origin and turn", () => {
  assert.deepEqual(
    [
      v("turn_start", 3),
      v("turn_end", 3),
      v("before_restore", null),
      v("restore", 2),
      v("restore", null),
      v("revert", null),
      v("undo", null),
      v("redo", null),
      v("now", null),
    ].map(versionWhat),
    ["turn 3 start", "turn 3 end", "before a restore", "restored to before turn 2", "restored", "reverted", "undo", "redo", "now"],
  );
});

test("a version's state, time and why it cannot be restored", () => {
  const sha = "0123456789abcdef".repeat(4);
  assert.equal(versionState(v("turn_end", 0, { sha256: sha, size: 2 })), "0123456789ab 2 B");
  assert.equal(versionState(v("turn_start", 0, { existed: false })), "absent");
  assert.equal(versionState(v("turn_start", 0)), "present (hash not recorded)");
  assert.equal(versionTime(v("now", null, { time: "2026-12-06T19:40:45.66Z" })), "2026-12-06 19:40:45");
  assert.equal(versionTime(v("now", null)), "");
  assert.equal(versionWhyNot(v("turn_end", 1)), "");
  assert.equal(versionWhyNot(v("turn_end", 1, { restorable: false, reason: "its bytes were not kept" })), "cannot be restored: its bytes were not kept");
  assert.equal(versionWhyNot(v("turn_end", 1, { restorable: false })), "cannot be restored");
});

test("the table offers a restore for each restorable version and says why not for the others", async () => {
  const h = {
    path: "a.txt",
    versions: [
      v("turn_start", 0, { version: 1, existed: false }),
      v("turn_end", 0, { version: 2, sha256: "ab".repeat(32), size: 2, restorable: false, reason: "payload gone" }),
      v("now", null, { version: 3, sha256: "cd".repeat(32), size: 4 }),
    ],
  };
  const restored = [];
  const t = historyTable(h, (version) => restored.push(version.version));
  const rows = within(t).filter((e) => e.tag === "tr" && e.dataset.version);
  assert.deepEqual(
    rows.map((r) => r.children.map((c) => c.textContent)),
    [
      ["v1", "turn 0 start", "", "absent", "Restore this version"],
      ["v2", "turn 0 end", "", "abababababab 2 B", "cannot be restored: payload gone"],
      ["v3", "now", "", "cdcdcdcdcdcd 4 B", "Restore this version"],
    ],
  );
  const buttons = within(t).filter((e) => e.tag === "button");
  assert.equal(buttons.length, 2);
  await click(buttons[1]);
  assert.deepEqual(restored, [3]);
});
