// A turn's results as the page words and shows them (assets/results.js) in node, on the few
// elements of dom.mjs: the summary line from a checkpoint entry and from the results, each file's
// detail (counts, a binary one's sizes, why one cannot be shown), how a command ended, and the
// section that reads the results only when first opened.
//
//   node --test tests/unit/
import { test } from "node:test";
import assert from "node:assert/strict";
import { click, within } from "./dom.mjs";

const { commandEnd, entryCounts, fileDetail, resultsCounts, resultsSection, resultsSummary } = await import("../../assets/results.js");

test("the summary says files, lines and commands, from the entry and from the results", () => {
  assert.equal(resultsSummary({ files: 2, added: 5, removed: 1, commands: 1 }), "2 files +5 −1 · 1 command");
  assert.equal(resultsSummary({ files: 1, added: 0, removed: 3 }), "1 file +0 −3");
  assert.equal(resultsSummary({ files: 0, added: 0, removed: 0, commands: 2 }), "no file changes · 2 commands");
  assert.equal(resultsSummary({ files: 0, added: null, removed: null }), "no file changes");
  // a turn recorded before the counts were, or still running: no counts to show
  assert.equal(resultsSummary({ files: 3, added: null, removed: null }), "3 files");
  // A turn that only moved files or wrote them unchanged: its counts would say nothing.
  assert.equal(resultsSummary({ files: 3, added: 0, removed: 0, commands: 1 }), "3 files · 1 command");

  assert.deepEqual(entryCounts({ turn: 0, file_count: 2, paths: ["a", "b"], added: 4, removed: 1 }), { files: 2, added: 4, removed: 1 });
  assert.deepEqual(entryCounts({ turn: 0, file_count: 1, paths: ["a"] }), { files: 1, added: null, removed: null });
  const r = {
    files: [
      { path: "a", action: "modify", added: 3, removed: 1 },
      { path: "b.png", action: "create", added: 0, removed: 0, binary: true },
    ],
    commands: [{ command: "make", exit_code: 0, duration_ms: 5, status: "ok" }],
  };
  assert.deepEqual(resultsCounts(r), { files: 2, added: 3, removed: 1, commands: 1 });
  assert.equal(resultsSummary(resultsCounts(r)), "2 files +3 −1 · 1 command");
});

test("each file's detail: its counts, a binary one's sizes, why one has no diff", () => {
  assert.equal(fileDetail({ path: "a.txt", action: "modify", added: 3, removed: 1 }), "+3 −1");
  // a move that changed no line says no counts
  assert.equal(fileDetail({ path: "b.txt", from: "a.txt", action: "move", added: 0, removed: 0 }), "");
  assert.equal(
    fileDetail({ path: "i.png", action: "modify", added: 0, removed: 0, binary: true, before: { sha256: "x", size: 3 }, after: { sha256: "y", size: 2048 } }),
    "binary, 3 B → 2.0 KiB",
  );
  assert.equal(fileDetail({ path: "i.png", action: "create", added: 0, removed: 0, binary: true, before: null, after: { size: 5 } }), "binary, absent → 5 B");
  assert.equal(
    fileDetail({ path: "old.txt", action: "delete", added: 0, removed: 0, unknown: "its bytes are no longer kept" }),
    "no diff: its bytes are no longer kept",
  );
});

test("how a command ended: its exit code or status, and how long it ran", () => {
  assert.equal(commandEnd({ command: "true", exit_code: 0, duration_ms: 12, status: "ok" }), "exit 0 · 12 ms");
  assert.equal(commandEnd({ command: "make", exit_code: 2, duration_ms: 1500, status: "failed" }), "exit 2 · 1.5 s");
  assert.equal(commandEnd({ command: "sleep 9", exit_code: null, duration_ms: null, status: "cancelled" }), "cancelled");
});

test("the section reads the results when first opened, then says what they count", async () => {
  let reads = 0;
  let fail = true;
  const results = {
    turn: 0,
    files: [
      { path: "a.txt", action: "modify", diff: "@@ -1 +1 @@\n-a\n+b\n", added: 1, removed: 1 },
      { path: "c.bin", action: "create", diff: "", added: 0, removed: 0, binary: true, before: null, after: { size: 4 } },
    ],
    commands: [{ command: "echo <b>", exit_code: 1, duration_ms: 3, status: "failed" }],
    gaps: [],
  };
  const box = resultsSection("2 files +1 −1", async () => {
    reads++;
    if (fail) throw new Error("turn_running");
    return results;
  });
  const [toggle, body] = box.children;
  assert.equal(reads, 0);
  assert.equal(body.hidden, true);
  assert.equal(toggle["aria-expanded"], "false");
  assert.ok(toggle.textContent.endsWith("2 files +1 −1"));

  // A failed read says why; the next opening reads again.
  await click(toggle);
  assert.equal(reads, 1);
  assert.equal(body.hidden, false);
  assert.ok(body.textContent.includes("cannot be read: turn_running"), body.textContent);
  await click(toggle);
  fail = false;
  await click(toggle);
  assert.equal(reads, 2);
  assert.ok(toggle.textContent.endsWith("2 files +1 −1 · 1 command"), toggle.textContent);
  // the files by name (each a button opening its history), the command as sent, escaped by text
  const names = within(body).filter((e) => e.className === "file-link").map((e) => e.textContent);
  assert.deepEqual(names, ["a.txt", "c.bin"]);
  const lines = within(body).filter((e) => e.className === "result-file").map((e) => e.textContent);
  assert.deepEqual(lines, ["modified a.txt +1 −1", "created c.bin (binary, absent → 4 B)"]);
  assert.ok(body.textContent.includes("echo <b> → exit 1 · 3 ms"), body.textContent);
  // a file's counts open its numbered diff
  const diffToggle = within(body).find((e) => e.className === "diff-toggle");
  assert.equal(diffToggle.textContent, "+1 −1");
  const diff = within(body).find((e) => e.className === "result-diff");
  assert.equal(diff.hidden, true);
  await click(diffToggle);
  assert.equal(diff.hidden, false);
  assert.ok(diff.textContent.includes("    1       -a"), diff.textContent);
  // closed and opened again: nothing read again
  await click(toggle);
  await click(toggle);
  assert.equal(reads, 2);
});

test("a section open before the page showed it again opens at once", async () => {
  let reads = 0;
  const box = resultsSection("no file changes", async () => {
    reads++;
    return { files: [], commands: [], gaps: [] };
  }, { open: true });
  await new Promise((r) => setTimeout(r, 0));
  assert.equal(reads, 1);
  assert.equal(box.children[1].hidden, false);
  assert.ok(box.textContent.includes("No file changed."));
});
