// Fork into a new workspace from the page, in Debian's chromium: two turns (one.txt written, then
// changed, two.txt made); turn 1's rewind menu offers "Fork into a new workspace" (its entry's
// action), which asks for the directory in the dialog and opens the new session in a new tab
// (`?session=ID`): its transcript ends before turn 1, its header names the new workspace, and the
// files there are the workspace's as they were when turn 1 started while the workspace's own stay.
// The toast says what was made. Any console error or page error, in either tab, fails the run.
//
//   node forkspace.mjs URL WORKSPACE SCREENSHOT_DIR
import fs from "node:fs";
import path from "node:path";
import { launch } from "./launch.mjs";

const run = await launch("forkspace.mjs");
const { url, ws, browser, file } = run;
try {
  const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  const page = run.watch(await context.newPage(), "source");
  const idle = () => page.locator("#send:not([disabled])").waitFor();
  const send = async (text) => {
    await page.locator("#prompt").fill(text);
    await page.locator("#prompt").press("Enter");
  };
  const read = (p) => (fs.existsSync(p) ? fs.readFileSync(p, "utf8") : null);
  const same = (what, got, want) => {
    if (JSON.stringify(got) !== JSON.stringify(want)) {
      throw new Error(`${what}:\n got: ${JSON.stringify(got)}\nwant: ${JSON.stringify(want)}`);
    }
  };

  await page.goto(url);
  await page.getByText(/No session yet/).waitFor();
  await send("write one");
  await page.locator(".msg.assistant", { hasText: "wrote one" }).waitFor();
  await idle();
  await send("change one, add two");
  await page.locator(".msg.assistant", { hasText: "changed one" }).waitFor();
  await idle();
  const source = new URL(page.url()).searchParams.get("session");
  same("the workspace after two turns", [read(file("one.txt")), read(file("two.txt"))], ["2\n", "2\n"]);

  // Turn 1's menu offers it as its entry says; it asks for the directory.
  const menu = page.locator('.msg.user[data-turn="1"] > .rewind');
  await menu.locator(".menu-toggle").click();
  const action = menu.locator('button[data-action="fork_workspace"]');
  same("the action's label", await action.locator(".label").textContent(), "Fork into a new workspace");
  await action.click();
  const dialog = page.locator("#rewind-dialog");
  await dialog.waitFor();
  const dir = dialog.locator("#fork-dir");
  if ((await dir.inputValue()).trim() === "") throw new Error("no directory is suggested");
  const target = path.join(path.dirname(ws), "forked");
  await dir.fill("");
  if (!(await page.locator("#rewind-confirm").isDisabled())) throw new Error("the fork can be sent without a directory");
  await dir.fill(target);
  await run.shot(page, "forkspace-dialog");
  const [tab] = await Promise.all([context.waitForEvent("page"), page.locator("#rewind-confirm").click()]);
  run.watch(tab, "new tab");
  await tab.waitForURL((u) => {
    const id = new URL(u).searchParams.get("session");
    return id !== null && id !== source;
  });
  const forked = new URL(tab.url()).searchParams.get("session");

  // The new tab shows the new session: the conversation before turn 1, in the new workspace.
  await tab.locator(".msg.user", { hasText: "write one" }).waitFor();
  await tab.locator(".msg.assistant", { hasText: "wrote one" }).waitFor();
  if (await tab.locator(".msg.user", { hasText: "change one" }).count()) throw new Error("the new session shows turn 1");
  await tab.locator("#workspace", { hasText: "forked" }).waitFor();
  const status = await tab.evaluate(async (id) => (await fetch(`/api/sessions/${encodeURIComponent(id)}`)).json(), forked);
  same("the new session's workspace", status.workspace, fs.realpathSync(target));
  await run.shot(tab, "forkspace-new-tab");

  // The files: turn 1's start there, the workspace's own untouched.
  same("the new workspace's files", [read(path.join(target, "one.txt")), read(path.join(target, "two.txt"))], ["1\n", null]);
  same("the workspace's files", [read(file("one.txt")), read(file("two.txt"))], ["2\n", "2\n"]);
  // The source tab stays on its session and says what was made.
  same("the source tab's session", new URL(page.url()).searchParams.get("session"), source);
  await page.locator("#banner", { hasText: "Forked" }).waitFor();
  await page.locator("#banner a", { hasText: "new tab" }).waitFor();
  await run.shot(page, "forkspace-toast");
  // Both sessions name each other.
  const listed = await tab.evaluate(async (w) => (await fetch(`/api/sessions?workspace=${encodeURIComponent(w)}`)).json(), status.workspace);
  same("the new session's origin", [listed[0].id, listed[0].forked_from?.session_id, listed[0].forked_from?.turn], [forked, source, 1]);
  const mine = await page.evaluate(async () => (await fetch("/api/sessions")).json());
  same("the source's forks", mine.find((e) => e.id === source)?.forks, [forked]);
  run.check("the fork");
} finally {
  await run.close();
}
