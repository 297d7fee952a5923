// Each turn's results and each file's history, in Debian's chromium: two turns (a.txt written;
// then a.txt edited and a shell command approved). Each prompt's results say what its checkpoint
// entry counts before anything more is read; opened (one by the keyboard), they are read from the
// results endpoint and show each file with its +/− opening its numbered, coloured diff, and the
// command with its exit code. The Versions panel shows each turn's +/− and opens its results.
// A file's name opens its history, on top of a restore's preview too; a version restored from it
// goes through the preview (its diff, the confirmation its shell command asks for), writes the
// file on disk, and the banner offers Undo, then Redo. Any console error or page error fails the
// run.
//
//   node history.mjs URL WORKSPACE SCREENSHOT_DIR
import fs from "node:fs";
import { launch } from "./launch.mjs";

const run = await launch("history.mjs");
const { url, browser, check, file } = run;
try {
  const page = run.watch(await browser.newPage({ viewport: { width: 1100, height: 900 } }));
  const shot = (name) => run.shot(page, `history-${name}`, { fullPage: true });
  const read = (p) => fs.readFileSync(file(p), "utf8");
  const same = (what, got, want) => {
    if (JSON.stringify(got) !== JSON.stringify(want)) {
      throw new Error(`${what}:\n got: ${JSON.stringify(got)}\nwant: ${JSON.stringify(want)}`);
    }
  };
  /** The results requests the page made. */
  const resultsAsked = [];
  page.on("request", (r) => {
    const m = /\/turns\/(\d+)\/results$/.exec(new URL(r.url()).pathname);
    if (m) resultsAsked.push(Number(m[1]));
  });
  const idle = () => page.locator("#send:not([disabled])").waitFor();
  const send = async (text) => {
    await page.locator("#prompt").fill(text);
    await page.locator("#prompt").press("Enter");
  };

  await page.goto(url);
  await page.getByText(/No session yet/).waitFor();
  await send("write a");
  await page.locator(".msg.assistant", { hasText: "wrote a.txt" }).waitFor();
  await idle();
  await send("edit a and check");
  await page.locator(".approval").getByRole("button", { name: "Allow once" }).click();
  await page.locator(".msg.assistant", { hasText: "edited a.txt" }).waitFor();
  await idle();
  same("a.txt after two turns", read("a.txt"), "1\ntwo\n3\n");
  const sid = new URL(page.url()).searchParams.get("session");
  const api = (p) => page.evaluate(async (u) => (await fetch(u)).json(), `/api/sessions/${encodeURIComponent(sid)}${p}`);

  // (a) Each prompt's results summary is its entry's counts: nothing read yet.
  const entries = (await api("/checkpoints")).entries;
  same("the entries' counts", entries.map((e) => [e.turn, e.added, e.removed]), [[0, 3, 0], [1, 1, 1]]);
  const results = (turn) => page.locator(`.msg.user[data-turn="${turn}"] > .results`);
  await results(0).locator(".results-toggle", { hasText: "1 file +3 −0" }).waitFor();
  await results(1).locator(".results-toggle", { hasText: "1 file +1 −1" }).waitFor();
  same("results read before any was opened", resultsAsked, []);

  // (b) Turn 0's results, opened: a.txt created, its +3 −0 opening its numbered diff.
  await results(0).locator(".results-toggle").click();
  const created = results(0).locator(".result-file", { hasText: "created a.txt" });
  await created.waitFor();
  same("results read", resultsAsked, [0]);
  await created.getByRole("button", { name: "+3 −0" }).click();
  const diff0 = created.locator(".tool-diff.numbered");
  await diff0.waitFor();
  same(
    "turn 0's diff",
    await diff0.locator("span.add").evaluateAll((ls) => ls.map((l) => l.textContent.replace(/\s+/g, " ").trim())),
    ["1 +1", "2 +2", "3 +3"],
  );
  await shot("turn-0");

  // (c) Turn 1's results by keyboard: the edit, and the command with its exit code.
  await results(1).locator(".results-toggle").focus();
  await page.keyboard.press("Enter");
  await results(1).locator(".result-command", { hasText: "echo checked → exit 0" }).waitFor();
  await results(1).locator(".results-toggle", { hasText: "1 file +1 −1 · 1 command" }).waitFor();
  const edited = results(1).locator(".result-file", { hasText: "modified a.txt" });
  await edited.getByRole("button", { name: "+1 −1" }).press("Enter");
  await edited.locator(".tool-diff .del", { hasText: "-2" }).waitFor();
  await edited.locator(".tool-diff .add", { hasText: "+two" }).waitFor();
  same("results read", resultsAsked, [0, 1]);

  // Closed again: nothing is read again when they open.
  await results(0).locator(".results-toggle").click();
  await results(1).locator(".results-toggle").click();
  await results(0).locator(".results-body").waitFor({ state: "hidden" });
  await results(1).locator(".results-body").waitFor({ state: "hidden" });

  // (d) The Versions panel: each turn's +/−, and its results.
  await page.locator("#versions-toggle").click();
  const li = (turn) => page.locator(`#checkpoints > li[data-turn="${turn}"]`);
  await li(0).locator(".cp-counts", { hasText: "+3 −0" }).waitFor();
  await li(1).locator(".cp-counts", { hasText: "+1 −1" }).waitFor();
  await li(1).locator(".results-toggle").click();
  await li(1).locator(".result-command", { hasText: "echo checked" }).waitFor();
  await shot("panel");
  await page.locator("#versions-toggle").click();

  // (e) a.txt's history, from the name in turn 1's results: every version the server lists.
  const history = await api("/history?path=a.txt");
  const what = { turn_start: (t) => `turn ${t} start`, turn_end: (t) => `turn ${t} end`, now: () => "now" };
  await results(1).locator(".results-toggle").click();
  const link = results(1).locator(".result-file .file-link", { hasText: "a.txt" });
  await link.click();
  const dialog = page.locator("#history-dialog");
  await dialog.locator("#history-title", { hasText: "History of a.txt" }).waitFor();
  const rows = dialog.locator("tr[data-version]");
  await rows.first().waitFor();
  same(
    "the versions shown",
    await rows.evaluateAll((rs) => rs.map((r) => [...r.children].slice(0, 2).map((c) => c.textContent))),
    history.versions.map((v) => [`v${v.version}`, what[v.origin](v.turn)]),
  );
  const absent = history.versions.find((v) => !v.existed);
  if (!absent) throw new Error(`no absent version: ${JSON.stringify(history.versions)}`);
  await rows.nth(absent.version - 1).locator("td", { hasText: "absent" }).waitFor();
  await shot("history");
  // Esc closes it, the focus back on the name that opened it.
  await page.keyboard.press("Escape");
  await dialog.waitFor({ state: "hidden" });
  if (!(await link.evaluate((b) => document.activeElement === b))) throw new Error("the focus did not go back to the file's name");

  // (f) From a restore's preview too: the history on top of it, closed back into it.
  await page.locator('.msg.user[data-turn="1"]').locator(".rewind .menu-toggle").click();
  await page.locator('.msg.user[data-turn="1"]').locator('.rewind button[data-action="restore_code"]').click();
  const preview = page.locator("#rewind-dialog");
  const inPreview = preview.locator(".plan-files .file-link", { hasText: "a.txt" });
  await inPreview.click();
  await dialog.locator("tr[data-version]").first().waitFor();
  await dialog.getByRole("button", { name: "Close" }).click();
  await dialog.waitFor({ state: "hidden" });
  if (!(await preview.isVisible())) throw new Error("closing the history closed the preview");
  if (!(await inPreview.evaluate((b) => document.activeElement === b))) throw new Error("the focus did not go back into the preview");
  await preview.getByRole("button", { name: "Cancel" }).click();
  await preview.waitFor({ state: "hidden" });

  // (g) Turn 0's end restored from the history: its preview with its diff, the confirmation the
  // shell command asks for, the file on disk, then Undo and Redo.
  const end0 = history.versions.find((v) => v.origin === "turn_end" && v.turn === 0);
  await results(1).locator(".result-file .file-link", { hasText: "a.txt" }).click();
  const prepared = page.waitForResponse((r) => r.url().endsWith("/revert/prepare"));
  await dialog.locator(`tr[data-version="${end0.version}"]`).getByRole("button", { name: /Restore this version/ }).click();
  const sentPrepare = (await prepared).request().postDataJSON();
  same("the revert asked for", sentPrepare, { path: "a.txt", version: end0.version });
  await dialog.waitFor({ state: "hidden" });
  await preview.locator("#rewind-title", { hasText: `Restore a.txt to version ${end0.version} (turn 0 end)` }).waitFor();
  await preview.locator(".plan-files .diff-toggle", { hasText: "+1 −1" }).click();
  await preview.locator(".plan-diff .tool-diff .del", { hasText: "-two" }).waitFor();
  await preview.locator(".plan-diff .tool-diff .add", { hasText: "+2" }).waitFor();
  const confirm = page.locator("#rewind-confirm");
  const tick = preview.locator(".confirm-untracked input");
  if (await tick.count()) {
    if (!(await confirm.isDisabled())) throw new Error("the restore can be committed before the confirmation is ticked");
    await tick.check();
  }
  await shot("preview");
  const committed = page.waitForRequest((r) => r.url().endsWith("/revert/commit"));
  await page.locator("#rewind-confirm:not(:disabled)", { hasText: "Restore this version" }).click();
  const body = (await committed).postDataJSON();
  if (body.overwrite !== false) throw new Error(`the commit sent ${JSON.stringify(body)}`);
  await page.locator("#banner", { hasText: `Restored a.txt to version ${end0.version} (turn 0 end)` }).waitFor();
  same("a.txt restored", read("a.txt"), "1\n2\n3\n");
  await shot("restored");
  await page.locator("#banner").getByRole("button", { name: "Undo" }).click();
  await page.locator("#banner", { hasText: "Undone" }).waitFor();
  same("a.txt after the undo", read("a.txt"), "1\ntwo\n3\n");
  await page.locator("#banner").getByRole("button", { name: "Redo" }).click();
  await page.locator("#banner", { hasText: "Redone" }).waitFor();
  same("a.txt after the redo", read("a.txt"), "1\n2\n3\n");

  // The history now has the restore, the undo and the redo (what each replaced is no news here:
  // Retrace wrote it, so no `before_restore` version is listed).
  const after = await api("/history?path=a.txt");
  if (after.versions.some((v) => v.origin === "before_restore")) {
    throw new Error(`a before_restore version that is no news: ${JSON.stringify(after.versions)}`);
  }
  for (const o of ["revert", "undo", "redo"]) {
    if (!after.versions.some((v) => v.origin === o)) throw new Error(`no ${o} version: ${JSON.stringify(after.versions)}`);
  }
  // turn 1's results stayed open while the page read the session again after each of them
  await results(1).locator(".results-body").waitFor();
  await results(1).locator(".result-file .file-link", { hasText: "a.txt" }).click();
  await dialog.locator(`tr[data-version="${after.versions.length}"]`).waitFor();
  same(
    "the versions shown after",
    await dialog.locator("tr[data-version] td:nth-child(2)").allTextContents(),
    after.versions.map((v) => ({ ...what, before_restore: () => "before a restore", revert: () => "reverted", undo: () => "undo", redo: () => "redo" })[v.origin](v.turn)),
  );
  await shot("history-after");
  await page.keyboard.press("Escape");
  await dialog.waitFor({ state: "hidden" });
  same("results read", resultsAsked, [0, 1]);
  check("the end");
  console.log("history flow ok");
} finally {
  await run.close();
}
