// The page's plain words (assets/words.js, util.js): the turn a restore lands before, a
// session's name in the picker with a relative time, counts with their plurals, what an undo or a
// redo did (checkpoints.js `walkSaid`); and a tool call's headline as the terminal UI says it
// (changes.js `toolHeadline`).
//
//   node --test tests/unit/
import { test } from "node:test";
import assert from "node:assert/strict";

import "./dom.mjs";

const { ago, count } = await import("../../assets/util.js");
const { beforeTurn, sessionLabel } = await import("../../assets/words.js");
const { toolHeadline } = await import("../../assets/changes.js");
const { walkSaid } = await import("../../assets/checkpoints.js");

const text = (nodes) => nodes.map((n) => (typeof n === "string" ? n : n.textContent)).join("");

test("counts take their plural", () => {
  assert.equal(count(1, "turn"), "1 turn");
  assert.equal(count(0, "file"), "0 files");
  assert.equal(count(2, "match"), "2 matches");
});

test("times read as how long ago, never as timestamps", () => {
  const now = Date.parse("2026-12-06T12:00:00Z");
  const at = (s) => new Date(now - s * 1000).toISOString();
  assert.equal(ago(at(5), now), "just now");
  assert.equal(ago(at(60), now), "1 minute ago");
  assert.equal(ago(at(5 * 60), now), "5 minutes ago");
  assert.equal(ago(at(3 * 3600), now), "3 hours ago");
  assert.equal(ago(at(30 * 3600), now), "yesterday");
  assert.equal(ago(at(4 * 86400), now), "4 days ago");
  assert.equal(ago(at(21 * 86400), now), "3 weeks ago");
  assert.equal(ago(at(-60), now), "just now");
  assert.equal(ago("not a time", now), "");
});

test("a session is named by its first prompt, its last use and its turns", () => {
  const now = Date.parse("2026-12-06T12:00:00Z");
  const e = { id: "x", first_prompt: "fix the\nparser", last_used_at: "2026-12-06T11:55:00Z", turns: 3 };
  assert.equal(sessionLabel(e, now), "fix the parser · 5 minutes ago · 3 turns");
  assert.equal(sessionLabel({ ...e, first_prompt: null, turns: 0 }, now), "New session · 5 minutes ago · 0 turns");
  const long = sessionLabel({ ...e, first_prompt: "a".repeat(100), turns: 1 }, now);
  assert.ok(long.startsWith(`${"a".repeat(47)}… · `), long);
  assert.ok(long.endsWith("1 turn"), long);
  // one another Retrace holds says so
  assert.equal(sessionLabel({ ...e, held_by: { pid: 7, says: "…" } }, now), "fix the parser · 5 minutes ago · 3 turns · open in another Retrace");
});

test("an undo and a redo say what they did, with counts", () => {
  const result = (written, deleted) => ({ files_written: written, files_deleted: deleted });
  assert.equal(walkSaid(result(["a"], []), "Undone", "code"), "Undone: 1 file written back.");
  assert.equal(walkSaid(result(["a", "b"], ["c"]), "Redone", "code"), "Redone: 2 files written, 1 file deleted.");
  assert.equal(walkSaid(result([], []), "Undone", "conversation"), "Undone: the conversation is back as it was.");
  assert.equal(walkSaid(result(["a"], []), "Undone", "both"), "Undone: the conversation is back as it was; 1 file written back.");
  assert.equal(walkSaid(result([], []), "Redone", "both"), "Redone: the conversation restored again.");
  assert.equal(walkSaid(result([], []), "Undone", "code"), "Undone: the restore was taken back.");
});

test("a restore's turn is said in words", () => {
  assert.equal(beforeTurn(2), "before turn 2");
});

test("a tool call's headline is its title as the controller words it, with chips and counts", () => {
  const change = (action, path, added, removed, more = {}) => ({ action, path, added, removed, diff: "", ...more });
  const call = (title, status, changes, more = {}) => ({ tool: "edit_file", title, status, changes, output: "", ...more });
  assert.equal(text(toolHeadline(call("Edited calc/ops.py", "ok", [change("modify", "calc/ops.py", 3, 0)]))), "Edited calc/ops.py +3 −0");
  assert.equal(text(toolHeadline(call("Edit calc/ops.py", "running", [change("modify", "calc/ops.py", 3, 0)]))), "Edit calc/ops.py +3 −0");
  assert.equal(text(toolHeadline(call("Created new.txt", "ok", [change("create", "new.txt", 1, 0)]))), "Created new.txt +1 −0");
  assert.equal(text(toolHeadline(call("Deleted old.txt", "ok", [change("delete", "old.txt", 0, 2)]))), "Deleted old.txt +0 −2");
  assert.equal(text(toolHeadline(call("Edited a (2 edits)", "ok", [change("modify", "a", 2, 2)]))), "Edited a (2 edits) +2 −2");
  assert.equal(text(toolHeadline(call("Created i.png", "ok", [change("create", "i.png", 0, 0, { binary: true })]))), "Created i.png");
  // a rerun write that changed nothing: its file as a chip, and "unchanged"; a call that did not
  // run (or names no file) shows its title as it came
  const unchanged = toolHeadline(call("Wrote a.txt", "ok", [], { tool: "write_file", target: "a.txt" }));
  assert.equal(text(unchanged), "Wrote a.txt unchanged");
  assert.equal(text(toolHeadline(call("Wrote a.txt", "ok", []))), "Wrote a.txt");
  assert.equal(text(toolHeadline(call("Write a.txt", "denied", []))), "Write a.txt");
  // each changed file's name is a chip that opens its history, a move's two names too
  const chips = (nodes) => nodes.filter((n) => n.tag === "button").map((c) => [c.dataset.file, c.className]);
  assert.deepEqual(chips(toolHeadline(call("Edited calc/ops.py", "ok", [change("modify", "calc/ops.py", 3, 0)]))), [["calc/ops.py", "file-link chip"]]);
  const moved = toolHeadline(call("Moved a.txt → b/a.txt", "ok", [change("move", "b/a.txt", 0, 0, { from: "a.txt" })]));
  // a move that changed no line says no counts
  assert.equal(text(moved), "Moved a.txt → b/a.txt");
  assert.deepEqual(chips(moved).map(([f]) => f), ["a.txt", "b/a.txt"]);
  assert.deepEqual(chips(unchanged), [["a.txt", "file-link chip"]]);
  // a name inside another word is no chip
  assert.deepEqual(chips(toolHeadline(call("Edited e (2 edits)", "ok", [change("modify", "e", 1, 1)]))).map(([f]) => f), ["e"]);
  const ran = { tool: "bash", title: "Ran npm test", target: "npm test", status: "ok", output: "boom\n[exit code 1]" };
  assert.equal(text(toolHeadline(ran)), "Ran npm test · exit 1");
  assert.equal(text(toolHeadline({ ...ran, exit_code: 2, duration_ms: 2100 })), "Ran npm test · exit 2 · 2.1 s");
  assert.equal(text(toolHeadline({ ...ran, title: "Run npm test", status: "running", output: "" })), "Run npm test");
  assert.equal(text(toolHeadline({ tool: "read_file", title: "Read a.txt", status: "ok", output: "x" })), "Read a.txt");
});

// Found by an attack: a U+202E in an MCP call's arguments reordered the line of the approval.
test("a value from the model or a server is shown with its invisible characters escaped", async () => {
  const { visible } = await import("../../assets/util.js");
  assert.equal(visible("b__c: \u202eRTL"), "b__c: \\u{202e}RTL");
  assert.equal(visible("a\u001b[2Jb\nc\td"), "a\\u{1b}[2Jb\\nc\\td");
  assert.equal(visible("zero\u200bwidth \u2066iso\u2069 tag\u{e0041}"), "zero\\u{200b}width \\u{2066}iso\\u{2069} tag\\u{e0041}");
  assert.equal(visible("écho 日本 🙂"), "écho 日本 🙂");
});
