// What the page offers on a turn is what the server says, in Debian's chromium: three turns (two
// written files, then a shell command, approved). Each prompt's rewind menu and each checkpoint
// of the Versions panel show their entry's `actions` (`GET …/checkpoints`): the same labels in
// the same order, an unavailable one disabled with its reason shown (its title and its text).
// A code restore over a file edited by hand offers the plan's conflict choices with the one it
// opens on (`preselected`: keeping the file) picked; the file table's action column follows the
// pick (the chosen choice's `files`), and the commit sends `confirm` only once the user ticked the
// confirmation the plan asks for (its shell command's effects stay). A conversation restore goes
// through the preview too, and sends no `confirm`. Any console error or page error fails the run.
//
//   node actions.mjs URL WORKSPACE SCREENSHOT_DIR
import fs from "node:fs";
import { launch } from "./launch.mjs";

const run = await launch("actions.mjs");
const { url, browser, file } = run;
try {
  const page = run.watch(await browser.newPage({ viewport: { width: 1100, height: 900 } }));
  const shot = (name) => run.shot(page, `actions-${name}`, { fullPage: true });
  const same = (what, got, want) => {
    if (JSON.stringify(got) !== JSON.stringify(want)) {
      throw new Error(`${what}:\n got: ${JSON.stringify(got)}\nwant: ${JSON.stringify(want)}`);
    }
  };
  const idle = () => page.locator("#send:not([disabled])").waitFor();
  const send = async (text) => {
    await page.locator("#prompt").fill(text);
    await page.locator("#prompt").press("Enter");
  };

  await page.goto(url);
  await page.getByText(/No session yet/).waitFor();
  await send("write one");
  await page.locator(".msg.assistant", { hasText: "wrote one" }).waitFor();
  await idle();
  await send("write two");
  await page.locator(".msg.assistant", { hasText: "wrote two" }).waitFor();
  await idle();
  await send("run a command");
  await page.locator(".approval").getByRole("button", { name: "Allow once" }).click();
  await page.locator(".msg.assistant", { hasText: "ran it" }).waitFor();
  await idle();
  const sid = new URL(page.url()).searchParams.get("session");
  const entries = () =>
    page.evaluate(async (id) => (await (await fetch(`/api/sessions/${encodeURIComponent(id)}/checkpoints`)).json()).entries, sid);

  /** The buttons of the menu `menu` (a locator): each one's label, action, state and reason. */
  const buttons = (menu) =>
    menu.evaluate((m) =>
      [...m.querySelectorAll(".menu-list button")].map((b) => ({
        label: b.querySelector(".label")?.textContent,
        action: b.dataset.action,
        disabled: b.disabled,
        title: b.title,
        text: b.textContent,
      })),
    );
  /** What `menu` should show for `entry`: its actions, in order, unavailable ones with reasons. */
  const expected = (entry) =>
    entry.actions.map((a) => ({ label: a.label, action: a.action, disabled: !a.available, reason: a.reason ?? null }));
  const shown = (bs) =>
    bs.map((b) => {
      if (b.disabled && !(b.title && b.text.includes(b.title))) throw new Error(`the disabled ${b.label} does not show its reason: ${JSON.stringify(b)}`);
      return { label: b.label, action: b.action, disabled: b.disabled, reason: b.disabled ? b.title : null };
    });
  const menuOf = (turn) => page.locator(`.msg.user[data-turn="${turn}"] > .rewind`);
  const panelMenuOf = (turn) => page.locator(`#checkpoints > li[data-turn="${turn}"] > .cp-actions`);

  // (a) Each prompt's menu is its entry's actions; turn 0 has nothing before it to summarize.
  const listed = await entries();
  same("the turns listed", listed.map((e) => e.turn), [0, 1, 2]);
  for (const e of listed) {
    same(`turn ${e.turn}'s labels`, e.actions.map((a) => a.label), [
      "Restore code and conversation",
      "Restore conversation",
      "Restore code",
      "Fork from here",
      "Summarize from here",
      "Summarize up to here",
      "Fork into a new workspace",
    ]);
    same(`turn ${e.turn}'s menu`, shown(await buttons(menuOf(e.turn))), expected(e));
  }
  const upTo = listed[0].actions.find((a) => a.action === "summarize_up_to");
  if (upTo.available || !upTo.reason) throw new Error(`turn 0's summarize up to here: ${JSON.stringify(upTo)}`);
  await menuOf(0).locator(".menu-toggle").click();
  const disabled = menuOf(0).locator('button[data-action="summarize_up_to"]');
  if (!(await disabled.isDisabled())) throw new Error("an unavailable action is enabled");
  if (!(await disabled.isVisible()) || !(await disabled.textContent()).includes(upTo.reason)) throw new Error("the reason is not shown");
  await shot("menu");
  await page.keyboard.press("Escape");

  // … and so is each checkpoint's in the Versions panel.
  await page.locator("#versions-toggle").click();
  for (const e of listed) {
    await panelMenuOf(e.turn).waitFor();
    same(`turn ${e.turn}'s actions in the panel`, shown(await buttons(panelMenuOf(e.turn))), expected(e));
  }
  await page.locator("#versions-toggle").click();

  // (b) one.txt edited by hand: restoring code to before turn 0 conflicts on it, and spans the
  // shell command, whose effects stay (a confirmation).
  fs.writeFileSync(file("one.txt"), "mine\n");
  const dialog = page.locator("#rewind-dialog");
  const confirm = page.locator("#rewind-confirm");
  const prepared = page.waitForResponse((r) => r.url().endsWith("/rewind/prepare"));
  await page.locator('.msg.user[data-turn="0"]').locator(".rewind .menu-toggle").click();
  await page.locator('.msg.user[data-turn="0"]').locator('.rewind button[data-action="restore_code"]').click();
  const plan = await (await prepared).json();
  same("the plan's blockers", plan.blockers.map((b) => b.kind), ["conflicts", "confirmation_required"]);
  await dialog.locator(".conflicts", { hasText: "one.txt" }).waitFor();
  const radios = dialog.locator("input[type=radio]");
  same(
    "the choices offered",
    await radios.evaluateAll((rs) => rs.map((r) => [r.value, r.closest("label").textContent.trim()])),
    plan.choices.map((c) => [c.on_conflict, c.label]),
  );
  same("the choice picked at first", await dialog.locator("input[type=radio]:checked").evaluateAll((rs) => rs.map((r) => r.value)), [plan.preselected]);
  if (plan.preselected !== "skip") throw new Error(`the plan opens on ${plan.preselected}, not on keeping the file`);
  // the confirmation is still to tick
  if (!(await confirm.isDisabled())) throw new Error("the commit button is enabled before the confirmation is ticked");
  /** The file table's action column, by path. */
  const actions = () =>
    dialog.locator(".plan-files tr[data-path]").evaluateAll((rows) => rows.map((r) => [r.dataset.path, r.querySelector(".file-action").textContent]));
  // each file's action in the server's words (its `says`: "keep", "unchanged"), the terminal UI's
  const WORDS = { write: "write", delete: "delete", skip: "keep", unchanged: "unchanged" };
  const choiceActions = (on) =>
    plan.choices.find((c) => c.on_conflict === on).files.map((f) => {
      if (f.says !== WORDS[f.action]) throw new Error(`${f.path}'s action ${f.action} is said ${JSON.stringify(f.says)}`);
      return [f.path, f.says];
    });
  const before = await actions();
  const cell = (rows) => rows.find(([p]) => p === "one.txt")?.[1];
  await dialog.getByLabel("Overwrite them").check();
  await shot("conflict-overwrite");
  const overwritten = await actions();
  same("the actions under Overwrite them", overwritten, choiceActions("overwrite"));
  if (cell(overwritten) === cell(before)) throw new Error(`picking Overwrite them left one.txt's action at ${cell(before)}`);
  await dialog.getByLabel("Skip them (keep your changes)").check();
  same("the actions under Skip them", await actions(), choiceActions("skip"));
  if (cell(await actions()) === cell(overwritten)) throw new Error("picking Skip them did not change one.txt's action back");
  await dialog.getByLabel("Overwrite them").check();
  // picked, the commit still waits for the confirmation, then says what it does
  if (!(await confirm.isDisabled())) throw new Error("the commit button is enabled before the confirmation is ticked");
  await dialog.locator(".confirm-untracked input").check();
  await page.locator("#rewind-confirm:not(:disabled)", { hasText: "Overwrite them" }).waitFor();
  const committed = page.waitForRequest((r) => r.url().endsWith("/rewind/commit"));
  await confirm.click();
  same("the commit sent", (await committed).postDataJSON(), { plan_id: plan.plan_id, confirm: true, on_conflict: "overwrite" });
  await page.locator("#banner", { hasText: "Restored code" }).waitFor();
  if (fs.existsSync(file("one.txt")) || fs.existsSync(file("two.txt"))) throw new Error("the overwrite did not remove the files");
  await page.locator("#banner").getByRole("button", { name: "Undo" }).click();
  await page.locator("#banner", { hasText: "Undone" }).waitFor();
  if (fs.readFileSync(file("one.txt"), "utf8") !== "mine\n") throw new Error("the undo did not bring back the hand edit");

  // A conversation restore goes through the preview too; it needs no confirmation and sends none.
  await page.locator('.msg.user[data-turn="2"]').locator(".rewind .menu-toggle").click();
  await page.locator('.msg.user[data-turn="2"]').locator('.rewind button[data-action="restore_conversation"]').click();
  await dialog.getByText("The conversation goes back").waitFor();
  if ((await dialog.locator("input").count()) !== 0) throw new Error("a conversation restore asks for a choice");
  const sent = page.waitForRequest((r) => r.url().endsWith("/rewind/commit"));
  await page.locator("#rewind-confirm:not(:disabled)", { hasText: "Restore conversation" }).click();
  const body = (await sent).postDataJSON();
  if (body.confirm !== false || body.on_conflict !== "refuse") throw new Error(`a conversation restore sent ${JSON.stringify(body)}`);
  await page.locator("#banner", { hasText: "Restored conversation" }).waitFor();

  // Turn 2 is not on the new head: the panel offers its code only, the rest says why.
  await page.locator("#versions-toggle").click();
  const now = (await entries()).find((e) => e.turn === 2);
  if (now.actions.filter((a) => a.available).map((a) => a.action).join() !== "restore_code") throw new Error(`turn 2 now offers ${JSON.stringify(now.actions)}`);
  await panelMenuOf(2).locator('button[data-action="restore_both"]:disabled').waitFor({ state: "attached" });
  same("turn 2's actions in the panel, off the head", shown(await buttons(panelMenuOf(2))), expected(now));
  await shot("off-head");
  console.log("actions flow ok");
} finally {
  await run.close();
}
