// A tool call's changes as the page shows them (assets/changes.js) in node: the lines of the diff
// its item carries, classed for colour and kept as they are, and a change in a sentence.
//
//   node --test tests/unit/
import { test } from "node:test";
import assert from "node:assert/strict";
import { changeText, changesCount, diffLines } from "../../assets/changes.js";

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
  assert.equal(changeText({ path: "one.txt", action: "create", added: 1, removed: 0 }), "created one.txt (+1 −0)");
  assert.equal(changeText({ path: "b", from: "a", action: "move", added: 0, removed: 0 }), "moved a → b (+0 −0)");
  assert.equal(changeText({ path: "img.png", action: "modify", added: 0, removed: 0, binary: true }), "modified img.png (binary)");
  assert.equal(changesCount([{ added: 2, removed: 1 }, { added: 1, removed: 0 }]), "+3 −1");
  assert.equal(changesCount([]), "");
});
