// The page's plain words (assets/words.js, util.js): conflict reasons and gaps in words, a
// session's name in the picker with a relative time, counts with their plurals; and a tool call's
// headline as the terminal UI says it (changes.js `toolHeadline`).
//
//   node --test tests/unit/
import { test } from "node:test";
import assert from "node:assert/strict";

import "./dom.mjs";

const { ago, count } = await import("../../assets/util.js");
const { beforeTurn, conflictWords, fileActionWords, gapWords, sessionLabel } = await import("../../assets/words.js");
const { toolHeadline } = await import("../../assets/changes.js");

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
});

test("conflicts, gaps and file actions are said in words", () => {
  assert.equal(beforeTurn(2), "before turn 2");
  assert.equal(conflictWords({ reason: "manual_edit", current_sha256: "ab" }), "edited outside Retrace");
  assert.equal(conflictWords({ reason: "external_change", current_sha256: "ab" }), "changed by a shell command or outside Retrace");
  assert.equal(conflictWords({ reason: "external_change", current_sha256: null, checkpoint_sha256: "cd" }), "deleted by a shell command or outside Retrace");
  assert.equal(conflictWords({ reason: "external_change", current_sha256: null, checkpoint_sha256: null }), "already absent");
  assert.equal(conflictWords({ reason: "something_new" }), "something_new");
  assert.equal(gapWords({ reason: "bash_side_effect", tool: "bash", detail: "rm x" }), "rm x — a shell command: what it did to files is not tracked");
  assert.equal(gapWords({ reason: "symlink", path: "a/b" }), "a/b — reached through a link");
  assert.equal(fileActionWords("skip"), "skip (keep as it is)");
  assert.equal(fileActionWords("unchanged"), "already as it was");
});

test("a tool call's headline reads like the terminal UI's", () => {
  const change = (action, path, added, removed, more = {}) => ({ action, path, added, removed, diff: "", ...more });
  const call = (status, changes, more = {}) => ({ tool: "edit_file", title: "Edit x", status, changes, output: "", ...more });
  assert.equal(text(toolHeadline(call("ok", [change("modify", "calc/ops.py", 3, 0)]))), "Edited calc/ops.py +3 −0");
  assert.equal(text(toolHeadline(call("running", [change("modify", "calc/ops.py", 3, 0)]))), "Editing calc/ops.py +3 −0");
  assert.equal(text(toolHeadline(call("ok", [change("create", "new.txt", 1, 0)]))), "Created new.txt +1 −0");
  assert.equal(text(toolHeadline(call("ok", [change("delete", "old.txt", 0, 2)]))), "Deleted old.txt +0 −2");
  assert.equal(text(toolHeadline(call("ok", [change("move", "b.txt", 0, 0, { from: "a.txt" })]))), "Moved a.txt → b.txt +0 −0");
  assert.equal(text(toolHeadline(call("ok", [change("create", "i.png", 0, 0, { binary: true })]))), "Created i.png binary");
  // each file's name is a chip that opens its history
  const chips = toolHeadline(call("ok", [change("modify", "calc/ops.py", 3, 0)])).filter((n) => n.tag === "button");
  assert.deepEqual(chips.map((c) => [c.dataset.file, c.className]), [["calc/ops.py", "file-link chip"]]);
  const ran = { tool: "bash", title: "Run npm test", target: "npm test", status: "failed", output: "boom\n[exit code 1]" };
  assert.equal(text(toolHeadline(ran)), "Ran npm test · exit 1");
  assert.equal(text(toolHeadline({ ...ran, exit_code: 2, duration_ms: 2100 })), "Ran npm test · exit 2 · 2.1 s");
  assert.equal(text(toolHeadline({ ...ran, status: "running", output: "" })), "Running npm test");
  assert.equal(text(toolHeadline({ tool: "read_file", title: "Read a.txt", status: "ok", output: "x" })), "Read a.txt");
});
