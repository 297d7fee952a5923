// The web UI end to end in Debian's chromium: two turns through the composer, the rewind menu
// (restore code, check the disk, undo, check again), restore conversation (the prompt comes back
// into the composer), the versions view and a head switch, a damaged head list (a head its own
// parent, two heads each other's: each shown once, marked), then a shell command's approval
// (denied), fork and summarize, plan mode (a write refused unrun; a second tab follows the switch),
// compact, a new session's address and a refused compaction. One rewind is driven by keyboard
// alone, and after every dialog, panel or re-render the keyboard focus must be on the control that
// opened it (or the composer), never on the page's body. A screenshot per step; any console error
// or page error fails the run.
//
//   node flow.mjs URL WORKSPACE SCREENSHOT_DIR
import fs from "node:fs";
import { launch } from "./launch.mjs";

const run = await launch("flow.mjs");
const { url, shots, browser, errors, file } = run;
let step = 0;
try {
  // one context: a second tab shares the page's token cookie
  const context = await browser.newContext({ viewport: { width: 1000, height: 700 } });
  const page = run.watch(await context.newPage());

  const shot = (name) => {
    step += 1;
    return run.shot(page, `${String(step).padStart(2, "0")}-${name}`);
  };
  const exists = (p) => fs.existsSync(file(p));
  // Where the keyboard focus is: the element's id, class, text, and the rewind action and turn.
  const active = () =>
    page.evaluate(() => {
      const a = document.activeElement;
      return {
        tag: a?.tagName.toLowerCase(),
        id: a?.id,
        cls: a?.className,
        text: a?.textContent.trim().slice(0, 40),
        action: a?.dataset?.action,
        turn: a?.closest?.(".msg.user")?.dataset.turn,
      };
    });
  // The focus settles on the expected element within 5 s (an action's re-render is async).
  const expectFocus = async (what, pred) => {
    const start = Date.now();
    for (;;) {
      const a = await active();
      if (a.tag !== "body" && pred(a)) return;
      if (Date.now() - start > 5000) throw new Error(`after ${what} the focus is on ${JSON.stringify(a)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const onAction = (action, turn) => (a) => a.action === action && a.turn === String(turn);
  const waitFor = async (what, f) => {
    const start = Date.now();
    while (!f()) {
      if (Date.now() - start > 15000) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  await page.goto(url);
  await page.getByText(/No session yet/).waitFor();
  await shot("empty");

  // Two turns through the composer: Enter sends.
  const prompt = page.locator("#prompt");
  await prompt.fill("write one");
  await prompt.press("Enter");
  await page.locator(".msg.assistant", { hasText: "wrote one" }).waitFor();
  // the answer shows while the turn still runs: the next prompt waits for its end
  await page.locator("#send:not([disabled])").waitFor();
  await prompt.fill("write two");
  await prompt.press("Enter");
  await page.locator(".msg.assistant", { hasText: "wrote two" }).waitFor();
  await page.locator("#send:not([disabled])").waitFor();
  if (!exists("one.txt") || !exists("two.txt")) throw new Error("the turns did not write their files");
  const call = page.locator(".tool", { hasText: "Created one.txt" }).first();
  await call.waitFor();
  // A tool call opens to the change it made: the file, its line counts and its diff (from the
  // server), each line coloured.
  await call.locator("summary").click();
  await call.locator(".change-head", { hasText: "created one.txt (+1 −0)" }).waitFor();
  await call.locator(".tool-diff .add", { hasText: "+1" }).first().waitFor();
  await page.locator(".msg.checkpoint", { hasText: "Checkpoint of turn 0: 1 file" }).waitFor();
  await shot("two-turns");

  // Hover the first user message: the rewind controls show.
  const first = page.locator(".msg.user").first();
  await first.locator(".rewind .menu-toggle").click();
  await first.locator('.rewind button[data-action="restore_code"]').click();
  const dialog = page.locator("#rewind-dialog");
  await dialog.getByText("one.txt").waitFor();
  await dialog.getByText("two.txt").waitFor();
  // Each file's counts open its diff (what the restore does to it), its lines numbered and
  // coloured; a second click closes it.
  const oneRow = dialog.locator("tr[data-path='one.txt']");
  const oneDiff = dialog.locator("tr.plan-diff[data-diff-of='one.txt']");
  await oneRow.getByRole("button", { name: "+0 −1" }).click();
  await oneDiff.locator(".tool-diff .del", { hasText: "-1" }).waitFor();
  const gutter = await oneDiff.locator(".tool-diff .del .ln").first().textContent();
  if (gutter.trim() !== "1") throw new Error(`the removed line is numbered ${JSON.stringify(gutter)}`);
  await shot("preview");
  await oneRow.getByRole("button", { name: "+0 −1" }).click();
  await oneDiff.waitFor({ state: "hidden" });
  await page.locator("#rewind-confirm").click();
  await page.locator("#banner", { hasText: "Restored code" }).waitFor();
  await waitFor("the files to be removed", () => !exists("one.txt") && !exists("two.txt"));
  await shot("restored-code");

  // Undo from the banner: the files are back.
  await page.locator("#banner").getByRole("button", { name: "Undo" }).click();
  await page.locator("#banner", { hasText: "Undone" }).waitFor();
  await waitFor("the files to come back", () => exists("one.txt") && exists("two.txt"));
  if (fs.readFileSync(file("one.txt"), "utf8") !== "1\n") throw new Error("one.txt is not back as it was");
  await shot("undone");

  // The undo's banner offers Redo: the restore again, whose banner offers Undo once more.
  await page.locator("#banner").getByRole("button", { name: "Redo" }).click();
  await page.locator("#banner", { hasText: "Redone" }).waitFor();
  await waitFor("the files to be removed again", () => !exists("one.txt") && !exists("two.txt"));
  await page.locator("#banner").getByRole("button", { name: "Undo" }).click();
  await page.locator("#banner", { hasText: "Undone" }).waitFor();
  await waitFor("the files to come back again", () => exists("one.txt") && exists("two.txt"));

  // The same rewind by keyboard alone: Tab onto the first prompt's rewind button, Enter opens its
  // menu on its first action, arrows between them, Enter opens the preview on Confirm; Esc and
  // Cancel give the focus back to the menu's button; Enter confirms and the focus stays on the
  // (re-rendered) button; Shift+Tab back to the banner's Undo, Enter; then its Dismiss, Enter: the
  // focus goes to the composer.
  const dialogOpen = () => page.evaluate(() => document.querySelector("#rewind-dialog").open);
  await page.locator("#versions-toggle").focus();
  for (let i = 0; ; i++) {
    if (i > 30) throw new Error("Tab never reached the first prompt's rewind button");
    await page.keyboard.press("Tab");
    const a = await active();
    if (a.action === "menu" && a.turn === "0") break;
  }
  /** From the menu's button: opens the menu and goes down to Restore code. */
  const toRestoreCode = async (what) => {
    await page.keyboard.press("Enter");
    await expectFocus(`Enter on the rewind button (${what})`, onAction("restore_both", 0));
    await page.keyboard.press("ArrowDown");
    await expectFocus("ArrowDown", onAction("restore_conversation", 0));
    await page.keyboard.press("ArrowDown");
    await expectFocus("ArrowDown again", onAction("restore_code", 0));
  };
  await toRestoreCode("first");
  await page.keyboard.press("ArrowUp");
  await expectFocus("ArrowUp", onAction("restore_conversation", 0));
  await page.keyboard.press("ArrowDown");
  await expectFocus("ArrowDown to Restore code", onAction("restore_code", 0));
  await page.keyboard.press("Enter");
  await dialog.getByText("two.txt").waitFor();
  await expectFocus("opening the preview", (a) => a.id === "rewind-confirm");
  await page.keyboard.press("Escape");
  await page.waitForFunction(() => !document.querySelector("#rewind-dialog").open);
  await expectFocus("Esc in the preview", onAction("menu", 0));
  await toRestoreCode("again");
  await page.keyboard.press("Enter");
  await dialog.getByText("two.txt").waitFor();
  await page.keyboard.press("Tab");
  await expectFocus("Tab in the preview", (a) => a.id === "rewind-cancel");
  // the focus stays in the preview: Tab from its last control wraps to its first (the first
  // file's name, which opens its history), then its counts (which Enter opens and closes like a
  // click), and back
  await page.keyboard.press("Tab");
  await expectFocus("Tab from Cancel", (a) => a.cls === "file-link" && a.text === "one.txt");
  await page.keyboard.press("Tab");
  await expectFocus("Tab to the counts", (a) => a.cls === "diff-toggle" && a.text === "+0 −1");
  await page.keyboard.press("Enter");
  await dialog.locator("tr.plan-diff[data-diff-of='one.txt'] .tool-diff").waitFor();
  await page.keyboard.press("Enter");
  await dialog.locator("tr.plan-diff[data-diff-of='one.txt']").waitFor({ state: "hidden" });
  if (!(await dialogOpen())) throw new Error("Enter on a file's counts closed the preview");
  await page.keyboard.press("Shift+Tab");
  await expectFocus("Shift+Tab from the counts", (a) => a.cls === "file-link" && a.text === "one.txt");
  await page.keyboard.press("Shift+Tab");
  await expectFocus("Shift+Tab from the first control", (a) => a.id === "rewind-cancel");
  await page.keyboard.press("Enter");
  await page.waitForFunction(() => !document.querySelector("#rewind-dialog").open);
  await expectFocus("Cancel", onAction("menu", 0));
  await toRestoreCode("to commit");
  await page.keyboard.press("Enter");
  await dialog.getByText("two.txt").waitFor();
  await shot("keyboard-preview");
  await page.keyboard.press("Enter");
  await page.locator("#banner", { hasText: "Restored code" }).waitFor();
  await waitFor("the files to be removed (keyboard)", () => !exists("one.txt") && !exists("two.txt"));
  if (await dialogOpen()) throw new Error("the preview stayed open after Enter");
  await expectFocus("confirming by keyboard", onAction("menu", 0));
  // back to the banner's Undo (the banner comes before the transcript)
  for (let i = 0; ; i++) {
    if (i > 6) throw new Error("Shift+Tab never reached the banner's Undo");
    await page.keyboard.press("Shift+Tab");
    if ((await active()).text === "Undo") break;
  }
  await page.keyboard.press("Enter");
  await page.locator("#banner", { hasText: "Undone" }).waitFor();
  await waitFor("the files to come back (keyboard)", () => exists("one.txt") && exists("two.txt"));
  await expectFocus("Undo", (a) => a.text === "Redo");
  await page.keyboard.press("Tab");
  await expectFocus("Tab from Redo", (a) => a.text === "Dismiss");
  await page.keyboard.press("Enter");
  await page.locator("#banner").waitFor({ state: "hidden" });
  await expectFocus("Dismiss", (a) => a.id === "prompt");

  // A file edited by hand since Retrace wrote it is a conflict: the preview opens on keeping it
  // (the plan's `preselected`), ready to commit; skipped, it keeps the edit while the rest is
  // restored; undo again.
  fs.writeFileSync(file("one.txt"), "mine\n");
  await first.locator(".rewind .menu-toggle").click();
  await first.locator('.rewind button[data-action="restore_code"]').click();
  await dialog.locator(".conflicts", { hasText: "one.txt" }).waitFor();
  await page.locator("#rewind-confirm:not(:disabled)", { hasText: "Skip them" }).waitFor();
  if (!(await dialog.getByLabel("Skip them (keep your changes)").isChecked())) throw new Error("keeping the conflicted file is not picked at first");
  await shot("conflict");
  await page.locator("#rewind-confirm").click();
  // the banner counts the skipped file with the rest
  await page.locator("#banner", { hasText: "Restored code to before turn 0: 1 file deleted, 1 skipped" }).waitFor();
  await waitFor("two.txt to be removed", () => !exists("two.txt"));
  if (fs.readFileSync(file("one.txt"), "utf8") !== "mine\n") throw new Error("a skipped conflict was written");
  await page.locator("#banner").getByRole("button", { name: "Undo" }).click();
  await page.locator("#banner", { hasText: "Undone" }).waitFor();
  await waitFor("two.txt to come back", () => exists("two.txt"));

  // Both files edited by hand and skipped: nothing would change, and the preview says so at once
  // and only closes (it committed nothing, then said "Nothing was restored").
  const twoText = fs.readFileSync(file("two.txt"), "utf8");
  fs.writeFileSync(file("two.txt"), "mine too\n");
  await first.locator(".rewind .menu-toggle").click();
  await first.locator('.rewind button[data-action="restore_code"]').click();
  await dialog.locator(".conflicts", { hasText: "two.txt" }).waitFor();
  await dialog.getByLabel("Skip them (keep your changes)").check();
  await dialog.locator(".unchanged", { hasText: "Nothing would change: every file in the workspace is already as it was or kept as it is." }).waitFor();
  let committed = false;
  const watchCommit = (r) => {
    if (r.url().endsWith("/rewind/commit")) committed = true;
  };
  page.on("request", watchCommit);
  await page.locator("#rewind-confirm", { hasText: "Close" }).click();
  await page.waitForFunction(() => !document.querySelector("#rewind-dialog").open);
  page.off("request", watchCommit);
  if (committed) throw new Error("a preview that changes nothing committed");
  if (fs.readFileSync(file("two.txt"), "utf8") !== "mine too\n") throw new Error("a skipped conflict was written");
  fs.writeFileSync(file("two.txt"), twoText);

  // Restore the conversation to the second turn.
  const second = page.locator(".msg.user").nth(1);
  await second.locator(".rewind .menu-toggle").click();
  await second.locator('.rewind button[data-action="restore_conversation"]').click();
  await dialog.getByText("The conversation goes back").waitFor();
  await page.locator("#rewind-confirm").click();
  await page.locator("#banner", { hasText: "Restored conversation" }).waitFor();
  await expectFocus("restoring the conversation", (a) => a.id === "prompt");
  const value = await prompt.inputValue();
  if (value !== "write two") throw new Error(`the composer holds ${JSON.stringify(value)}`);
  if ((await page.locator(".msg.user").count()) !== 1) throw new Error("the transcript was not rewound");
  await shot("restored-conversation");

  // Versions: opened by keyboard, the focus goes into the panel; Esc closes it and the focus goes
  // back to its toggle. Two heads; switch back to the other one, which has both turns: the focus
  // goes to that head.
  await page.locator("#versions-toggle").focus();
  await page.keyboard.press("Enter");
  await page.locator("#checkpoints li", { hasText: "Turn 1" }).waitFor();
  await expectFocus("opening the versions", (a) => a.id === "versions");
  await page.keyboard.press("Escape");
  await page.locator("#versions").waitFor({ state: "hidden" });
  await expectFocus("Esc in the versions", (a) => a.id === "versions-toggle");
  await page.keyboard.press("Enter");
  await page.locator("#checkpoints li", { hasText: "Turn 1" }).waitFor();
  const other = page.locator(".head:not(.selected)").first();
  await other.getByRole("button", { name: "Switch" }).click();
  await page.locator(".msg.user", { hasText: "write two" }).waitFor();
  await expectFocus("switching heads", (a) => a.cls === "head-row");
  if ((await page.locator(".msg.user").count()) !== 2) throw new Error("the switched head does not show both turns");
  await shot("versions-switched");

  // A damaged head list (faked in the answer: the log refuses one): a head that names itself as
  // its parent, and two that name each other, are each shown once, marked, and the page goes on.
  const heads = "**/api/sessions/*/heads";
  const damaged = async (route) => {
    const res = await route.fetch();
    const list = await res.json();
    const fake = (id, name, parent_head) => ({ ...list[0], id, name, parent_head, selected: false, retired: false });
    list.push(fake("h-self", "self-parent", "h-self"), fake("h-a", "loop-a", "h-b"), fake("h-b", "loop-b", "h-a"));
    await route.fulfill({ response: res, json: list });
  };
  const reopenVersions = async () => {
    await page.locator("#versions-toggle").click();
    await page.locator("#versions").waitFor({ state: "hidden" });
    await page.locator("#versions-toggle").click();
  };
  await page.route(heads, damaged);
  await reopenVersions();
  const self = page.locator('.head[data-head="h-self"]');
  await self.locator(".head-loop", { hasText: "names itself as its parent" }).waitFor();
  await page.locator('.head[data-head="h-a"] > .head-loop', { hasText: "its parent h-b leads back to it" }).waitFor();
  await page.locator('.head[data-head="h-a"] .head[data-head="h-b"]').waitFor();
  for (const id of ["h-self", "h-a", "h-b"]) {
    const n = await page.locator(`.head[data-head="${id}"]`).count();
    if (n !== 1) throw new Error(`head ${id} is shown ${n} times`);
  }
  if ((await page.locator(".head-loop").count()) !== 2) throw new Error("not exactly two heads are marked");
  await shot("damaged-heads");
  await page.unroute(heads, damaged);
  await reopenVersions();
  await page.locator('.head[data-head="h-self"]').waitFor({ state: "detached" });

  // A shell command asks first: the inline prompt; deny it and the turn goes on.
  await prompt.fill("run a command");
  await prompt.press("Enter");
  const approval = page.locator(".approval", { hasText: "echo no > never.txt" });
  await approval.waitFor();
  await shot("approval");
  await approval.getByRole("button", { name: "Deny" }).click();
  await page.locator(".msg.assistant", { hasText: "not run" }).waitFor();
  await page.locator("#send:not([disabled])").waitFor();
  await expectFocus("answering the approval", (a) => a.id === "prompt");
  if (exists("never.txt")) throw new Error("a denied command ran");

  // Fork from the first prompt: a new head, selected, with the conversation before it.
  await page.locator(".msg.user").first().locator(".rewind .menu-toggle").click();
  await page.locator(".msg.user").first().locator('.rewind button[data-action="fork"]').click();
  await page.locator("#rewind-confirm").click();
  await page.locator("#banner", { hasText: "Forked: a new head ends before turn 0" }).waitFor();
  await page.locator(".head.selected", { hasText: "fork" }).waitFor();
  await expectFocus("forking (the prompt is gone)", (a) => a.id === "prompt");
  if ((await page.locator(".msg.user").count()) !== 0) throw new Error("the fork shows prompts from after its turn");
  await shot("forked");
  await page.locator(".head:not(.selected)", { hasText: "main" }).getByRole("button", { name: "Switch" }).first().click();
  await page.locator(".msg.user", { hasText: "run a command" }).waitFor();

  // Summarize up to the second prompt: the model writes the summary onto a new, selected head.
  const two = page.locator(".msg.user", { hasText: "write two" });
  await two.locator(".rewind .menu-toggle").click();
  await two.locator('.rewind button[data-action="summarize_up_to"]').click();
  await page.locator("#rewind-confirm").click();
  await page.locator("#banner", { hasText: "Summary written" }).waitFor();
  await page.getByText("the summary of turns").first().waitFor();
  await shot("summarized");

  // The address names the session (`?session=ID`): a reload opens it again.
  if (!new URL(page.url()).searchParams.get("session")) throw new Error("the address does not name the session");
  await page.reload();
  await page.locator(".msg.assistant", { hasText: "not run" }).waitFor();
  const sessionUrl = page.url();

  // Plan mode: the switch (a checkbox, by keyboard) turns it on; the indicator shows above the
  // composer, and a second tab of the same session follows (on load, then by the event).
  const plan = page.locator("#plan-mode");
  const indicator = page.locator("#plan-indicator");
  if (await plan.isChecked()) throw new Error("plan mode is on in a new session");
  const tab = run.watch(await context.newPage(), "second tab");
  await tab.goto(sessionUrl);
  await tab.locator(".msg.assistant", { hasText: "not run" }).waitFor();
  await plan.focus();
  await page.keyboard.press("Space");
  await indicator.waitFor();
  await page.waitForFunction(() => document.querySelector("#plan-mode").checked);
  await expectFocus("turning plan mode on", (a) => a.id === "plan-mode");
  await tab.locator("#plan-indicator").waitFor();
  if (!(await tab.locator("#plan-mode").isChecked())) throw new Error("the second tab's switch did not follow");
  const status = await page.evaluate(async (u) => {
    const id = new URL(u).searchParams.get("session");
    return (await fetch(`/api/sessions/${encodeURIComponent(id)}`)).json();
  }, sessionUrl);
  if (status.plan_mode !== true) throw new Error(`the status says plan_mode ${status.plan_mode}`);
  // A turn whose model writes a file: refused unrun, the tool result says so.
  await prompt.fill("plan three");
  await prompt.press("Enter");
  await page.locator(".msg.assistant", { hasText: "the plan: write three.txt" }).waitFor();
  await page.locator("#send:not([disabled])").waitFor();
  if (exists("three.txt")) throw new Error("a write ran in plan mode");
  const refused = page.locator(".tool.denied", { hasText: "Write three.txt" });
  await refused.locator("summary").click();
  await refused.locator(".tool-out", { hasText: "plan mode is on" }).waitFor();
  await shot("plan-mode");
  // Off again, from the second tab this time: this one follows.
  await tab.locator("#plan-mode").click();
  await indicator.waitFor({ state: "hidden" });
  if (await plan.isChecked()) throw new Error("the switch did not follow the second tab");
  await tab.close();

  // Two more turns, then Compact: the model summarizes everything before the latest turn into a
  // new selected head; the transcript shows the summary, a line saying so, and the last turn;
  // the compacted head stays in Versions.
  await prompt.fill("fourth");
  await prompt.press("Enter");
  await page.locator(".msg.assistant", { hasText: "answer four" }).waitFor();
  await page.locator("#send:not([disabled])").waitFor();
  await prompt.fill("fifth");
  await prompt.press("Enter");
  await page.locator(".msg.assistant", { hasText: "answer five" }).waitFor();
  await page.locator("#send:not([disabled])").waitFor();
  if (await page.locator("#versions").isHidden()) await page.locator("#versions-toggle").click();
  const before = await page.locator(".head.selected").getAttribute("data-head");
  await page.evaluate(() => {
    new MutationObserver(() => {
      const b = document.querySelector("#compact");
      if (b.textContent.includes("Compacting") && b.getAttribute("aria-busy") === "true") window.sawCompacting = true;
    }).observe(document.querySelector("#compact"), { childList: true, subtree: true, attributes: true, characterData: true });
  });
  await page.locator("#compact").click();
  await page.locator("#banner", { hasText: /Compacted: about \S+ → \S+ tokens\. The full conversation stays in Versions\./ }).waitFor();
  await page.locator(".msg.note.compaction", { hasText: "Earlier conversation summarized:\nthe compacted summary of the session" }).waitFor();
  await page.locator(".msg.assistant", { hasText: "answer five" }).waitFor();
  if (!(await page.evaluate(() => window.sawCompacting))) throw new Error("the button never said it was compacting");
  if (await page.locator(".msg.assistant", { hasText: "answer four" }).count()) throw new Error("the compacted turns are still shown");
  const turns = await page.locator(".msg.user[data-turn]").allTextContents();
  if (turns.length !== 1 || !turns[0].startsWith("fifth")) throw new Error(`after compacting the turns are ${JSON.stringify(turns)}`);
  await page.locator(`.head:not(.selected)[data-head="${before}"]`).waitFor();
  const after = await page.locator(".head.selected").getAttribute("data-head");
  if (after === before) throw new Error("compacting did not select a new head");
  await expectFocus("compacting", (a) => a.id === "compact");
  await shot("compacted");

  // New session: empty, plan mode off, its address (`?session=`) opens it in another tab; Compact
  // there is refused, and the refusal is shown; its empty state starts a git-backed one.
  await page.locator("#new-session").click();
  await page.waitForFunction((u) => {
    const id = new URL(location.href).searchParams.get("session");
    return id && id !== new URL(u).searchParams.get("session");
  }, sessionUrl);
  await page.getByText(/Every edit can be taken back/).waitFor();
  const fresh = new URL(page.url()).searchParams.get("session");
  if ((await page.locator("#session-select").inputValue()) !== fresh) throw new Error("the new session is not selected");
  if (await plan.isChecked()) throw new Error("plan mode is on in the new session");
  const shared = await context.newPage();
  await shared.goto(page.url());
  await shared.getByText(/Every edit can be taken back/).waitFor();
  if ((await shared.locator("#session-select").inputValue()) !== fresh) throw new Error("the shared address opened another session");
  await shared.close();
  const seen = errors.length;
  await page.locator("#compact").click();
  const refusal = page.locator("#banner.error", { hasText: "refused" });
  await refusal.waitFor();
  // chromium logs the refused request (409) itself: that one console line is expected
  const logged = errors.splice(seen);
  if (logged.length !== 1 || !/409 \(Conflict\)/.test(logged[0])) errors.push(...logged);
  await shot("compact-refused");
  await refusal.getByRole("button", { name: "Dismiss" }).click();

  // The empty session says what its checkpoints cover, and starts one with the other backend.
  await page.locator(".empty-backend", { hasText: "Checkpoints: snapshots" }).waitFor();
  await page.getByRole("button", { name: "New session with git-backed checkpoints" }).click();
  await page.waitForFunction((f) => {
    const id = new URL(location.href).searchParams.get("session");
    return id && id !== f;
  }, fresh);
  await page.locator(".empty-backend", { hasText: "Checkpoints: git-backed (experimental)" }).waitFor();
  const gitStatus = await page.evaluate(async () => {
    const id = new URL(location.href).searchParams.get("session");
    return (await fetch(`/api/sessions/${encodeURIComponent(id)}`)).json();
  });
  if (gitStatus.backend !== "git") throw new Error(`the new session's backend is ${gitStatus.backend}`);
  await page.getByRole("button", { name: "New session with snapshot checkpoints" }).waitFor();

  // Back to the compacted session for the narrow view, with plan mode on.
  await page.goto(sessionUrl);
  await page.locator(".msg.assistant", { hasText: "answer five" }).waitFor();
  await plan.check();
  await indicator.waitFor();

  // 360 px wide: still usable (nothing wider than the screen).
  await page.setViewportSize({ width: 360, height: 740 });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth);
  if (overflow > 360) throw new Error(`the page is ${overflow} px wide at 360 px`);
  await shot("narrow");
  await plan.uncheck();
  await indicator.waitFor({ state: "hidden" });
  console.log(`web flow ok: ${step} screenshots in ${shots}`);
} finally {
  await run.close();
}
