// A tool call's changes as the page shows them (assets/changes.js) in node: the lines of the diff
// its item carries, classed for colour and kept as they are, numbered from the hunk headers, and
// a change in a sentence (on the few elements of dom.mjs).
//
//   node --test tests/unit/
import { test } from "node:test";
import assert from "node:assert/strict";
import { within } from "./dom.mjs";

const { changeBlock, changesCount, diffLines, numberedLines } = await import("../../assets/changes.js");

/** A change's sentence as the page shows it (its head), and the file names in it. */
const head = (c) => {
  const h = changeBlock(c).children[0];
  return [h.textContent, within(h).filter((e) => e.className === "file-link").map((e) => e.dataset.file)];
};

test("a unified diff's lines are classed by their first character and kept whole", () => {
  const diff = "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n\\ No newline at end of file\n";
  assert.deepEqual(diffLines(diff), [
    ["hunk", "@@ -1,3 +1,3 @@"],
    ["ctx", " a"],
    ["del", "-b"],
    ["add", "+B"],
    ["ctx", " c"],
    ["meta", "\\ No newline at end of file"],
  ]);
});

test("an empty diff has no lines, and a last line without a break is kept", () => {
  assert.deepEqual(diffLines(""), []);
  assert.deepEqual(diffLines(undefined), []);
  assert.deepEqual(diffLines("@@ -0,0 +1 @@\n+1"), [["hunk", "@@ -0,0 +1 @@"], ["add", "+1"]]);
  // a removed line that begins with dashes is still a removed line
  assert.deepEqual(diffLines("--- x\n"), [["del", "--- x"]]);
});

test("a change in a sentence, and the counts of several", () => {
  // each file's name a button opening its history
  assert.deepEqual(head({ path: "one.txt", action: "create", added: 1, removed: 0 }), ["created one.txt (+1 −0)", ["one.txt"]]);
  // a move that changed no line says no counts
  assert.deepEqual(head({ path: "b", from: "a", action: "move", added: 0, removed: 0 }), ["moved a → b", ["a", "b"]]);
  assert.deepEqual(head({ path: "b", from: "a", action: "move", added: 1, removed: 0 }), ["moved a → b (+1 −0)", ["a", "b"]]);
  assert.deepEqual(head({ path: "img.png", action: "modify", added: 0, removed: 0, binary: true }), ["modified img.png (binary)", ["img.png"]]);
  assert.equal(changesCount([{ added: 2, removed: 1 }, { added: 1, removed: 0 }]), "+3 −1");
  assert.equal(changesCount([]), "");
  assert.equal(changesCount([{ action: "move", added: 0, removed: 0 }]), "");
  assert.equal(changesCount([{ action: "move", added: 0, removed: 0 }, { action: "modify", added: 1, removed: 0 }]), "+1 −0");
});

test("a diff's lines are numbered in the old and the new file from each hunk's header", () => {
  const diff = "@@ -3,4 +3,4 @@\n a\n-b\n+B\n+C\n c\n@@ -20 +21,0 @@\n-z\n\\ No newline at end of file\n";
  assert.deepEqual(numberedLines(diff), [
    ["hunk", null, null, "@@ -3,4 +3,4 @@"],
    ["ctx", 3, 3, " a"],
    ["del", 4, null, "-b"],
    ["add", null, 4, "+B"],
    ["add", null, 5, "+C"],
    ["ctx", 5, 6, " c"],
    ["hunk", null, null, "@@ -20 +21,0 @@"],
    ["del", 20, null, "-z"],
    ["meta", null, null, "\\ No newline at end of file"],
  ]);
  // a new file counts from 1; a carriage return stays in its line
  assert.deepEqual(numberedLines("@@ -0,0 +1,2 @@\n+x\r\n+y\n"), [
    ["hunk", null, null, "@@ -0,0 +1,2 @@"],
    ["add", null, 1, "+x\r"],
    ["add", null, 2, "+y"],
  ]);
  assert.deepEqual(numberedLines(""), []);
});
