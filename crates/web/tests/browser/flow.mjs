// The web UI end to end in Debian's chromium: two turns through the composer, hover rewind
// (restore code, check the disk, undo, check again), restore conversation (the prompt comes back
// into the composer), the versions view and a head switch, then a shell command's approval
// (denied). One rewind is driven by keyboard alone, and after every dialog, panel or re-render the
// keyboard focus must be on the control that opened it (or the composer), never on the page's body.
// A screenshot per step; any console error or page error fails the run.
//
//   node flow.mjs URL WORKSPACE SCREENSHOT_DIR
import { chromium } from "playwright-core";
import fs from "node:fs";
import path from "node:path";

const [url, ws, shots] = process.argv.slice(2);
if (!url || !ws || !shots) {
  console.error("usage: node flow.mjs URL WORKSPACE SCREENSHOT_DIR");
  process.exit(2);
}
fs.mkdirSync(shots, { recursive: true });

const errors = [];
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  args: ["--no-sandbox"],
});
let step = 0;
try {
  const page = await browser.newPage({ viewport: { width: 1000, height: 700 } });
  page.setDefaultTimeout(15000);
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(`console: ${m.text()}`);
  });
  page.on("pageerror", (e) => errors.push(`page: ${e.message}`));

  const shot = async (name) => {
    step += 1;
    await page.screenshot({ path: path.join(shots, `${String(step).padStart(2, "0")}-${name}.png`) });
    if (errors.length) throw new Error(`after ${name}: ${errors.join("; ")}`);
  };
  const file = (p) => path.join(ws, p);
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
  const onAction = (label, turn) => (a) => a.action === label && a.turn === String(turn);
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
  await prompt.fill("write two");
  await prompt.press("Enter");
  await page.locator(".msg.assistant", { hasText: "wrote two" }).waitFor();
  await page.locator("#send:not([disabled])").waitFor();
  if (!exists("one.txt") || !exists("two.txt")) throw new Error("the turns did not write their files");
  const call = page.locator(".tool", { hasText: "write_file one.txt" }).first();
  await call.waitFor();
  // A tool call opens to the change it made: a written file's content as added lines.
  await call.locator("summary").click();
  await call.locator(".tool-diff .add", { hasText: "+ 1" }).first().waitFor();
  await shot("two-turns");

  // Hover the first user message: the rewind controls show.
  const first = page.locator(".msg.user").first();
  await first.hover();
  await first.getByRole("button", { name: "Restore code" }).click();
  const dialog = page.locator("#rewind-dialog");
  await dialog.getByText("one.txt").waitFor();
  await dialog.getByText("two.txt").waitFor();
  await shot("preview");
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

  // The same rewind by keyboard alone: Tab onto the first prompt, Enter into its actions, arrows
  // between them, Enter opens the preview on Confirm; Esc and Cancel give the focus back to the
  // action; Enter confirms and the focus stays on the (re-rendered) action; Shift+Tab back to the
  // banner's Undo, Enter; then its Dismiss, Enter: the focus goes to the composer.
  const dialogOpen = () => page.evaluate(() => document.querySelector("#rewind-dialog").open);
  await page.locator("#versions-toggle").focus();
  for (let i = 0; ; i++) {
    if (i > 30) throw new Error("Tab never reached the first prompt");
    await page.keyboard.press("Tab");
    const a = await active();
    if (a.tag === "article" && a.turn === "0") break;
  }
  await page.keyboard.press("Enter");
  await expectFocus("Enter on a prompt", onAction("Restore code", 0));
  await page.keyboard.press("ArrowRight");
  await expectFocus("ArrowRight", onAction("Restore conversation", 0));
  await page.keyboard.press("ArrowLeft");
  await expectFocus("ArrowLeft", onAction("Restore code", 0));
  await page.keyboard.press("Enter");
  await dialog.getByText("two.txt").waitFor();
  await expectFocus("opening the preview", (a) => a.id === "rewind-confirm");
  await page.keyboard.press("Escape");
  await page.waitForFunction(() => !document.querySelector("#rewind-dialog").open);
  await expectFocus("Esc in the preview", onAction("Restore code", 0));
  await page.keyboard.press("Enter");
  await dialog.getByText("two.txt").waitFor();
  await page.keyboard.press("Tab");
  await expectFocus("Tab in the preview", (a) => a.id === "rewind-cancel");
  // the focus stays in the preview: Tab from its last control wraps to its first, and back
  await page.keyboard.press("Tab");
  await expectFocus("Tab from Cancel", (a) => a.id === "rewind-confirm");
  await page.keyboard.press("Shift+Tab");
  await expectFocus("Shift+Tab from Confirm", (a) => a.id === "rewind-cancel");
  await page.keyboard.press("Enter");
  await page.waitForFunction(() => !document.querySelector("#rewind-dialog").open);
  await expectFocus("Cancel", onAction("Restore code", 0));
  await page.keyboard.press("Enter");
  await dialog.getByText("two.txt").waitFor();
  await shot("keyboard-preview");
  await page.keyboard.press("Enter");
  await page.locator("#banner", { hasText: "Restored code" }).waitFor();
  await waitFor("the files to be removed (keyboard)", () => !exists("one.txt") && !exists("two.txt"));
  if (await dialogOpen()) throw new Error("the preview stayed open after Enter");
  await expectFocus("confirming by keyboard", onAction("Restore code", 0));
  await page.keyboard.press("Shift+Tab");
  await page.keyboard.press("Shift+Tab");
  await page.keyboard.press("Shift+Tab");
  await expectFocus("Shift+Tab to the banner", (a) => a.text === "Undo");
  await page.keyboard.press("Enter");
  await page.locator("#banner", { hasText: "Undone" }).waitFor();
  await waitFor("the files to come back (keyboard)", () => exists("one.txt") && exists("two.txt"));
  await expectFocus("Undo", (a) => a.text === "Dismiss");
  await page.keyboard.press("Enter");
  await page.locator("#banner").waitFor({ state: "hidden" });
  await expectFocus("Dismiss", (a) => a.id === "prompt");

  // A file edited by hand since Retrace wrote it is a conflict: skipped (the default), it keeps
  // the edit while the rest is restored; undo again.
  fs.writeFileSync(file("one.txt"), "mine\n");
  await first.hover();
  await first.getByRole("button", { name: "Restore code" }).click();
  await dialog.locator(".conflicts", { hasText: "one.txt" }).waitFor();
  await shot("conflict");
  await page.locator("#rewind-confirm").click();
  await page.locator("#banner", { hasText: "Restored code" }).waitFor();
  await waitFor("two.txt to be removed", () => !exists("two.txt"));
  if (fs.readFileSync(file("one.txt"), "utf8") !== "mine\n") throw new Error("a skipped conflict was written");
  await page.locator("#banner").getByRole("button", { name: "Undo" }).click();
  await page.locator("#banner", { hasText: "Undone" }).waitFor();
  await waitFor("two.txt to come back", () => exists("two.txt"));

  // Restore the conversation to the second turn (keyboard focus shows the controls too).
  const second = page.locator(".msg.user").nth(1);
  await second.focus();
  await second.getByRole("button", { name: "Restore conversation" }).click();
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
  await page.locator(".msg.user").first().hover();
  await page.locator(".msg.user").first().getByRole("button", { name: "Fork from here" }).click();
  await page.locator("#banner", { hasText: "Forked from turn 0" }).waitFor();
  await page.locator(".head.selected", { hasText: "fork" }).waitFor();
  await expectFocus("forking (the prompt is gone)", (a) => a.id === "prompt");
  if ((await page.locator(".msg.user").count()) !== 0) throw new Error("the fork shows prompts from after its turn");
  await shot("forked");
  await page.locator(".head:not(.selected)", { hasText: "main" }).getByRole("button", { name: "Switch" }).first().click();
  await page.locator(".msg.user", { hasText: "run a command" }).waitFor();

  // Summarize up to the second prompt: the model writes the summary onto a new, selected head.
  const two = page.locator(".msg.user", { hasText: "write two" });
  await two.hover();
  await two.getByRole("button", { name: "Summarize up to here" }).click();
  await page.locator("#banner", { hasText: "Summary written" }).waitFor();
  await page.getByText("the summary of turns").first().waitFor();
  await shot("summarized");

  // The address names the session (`?session=ID`): a reload opens it again.
  if (!new URL(page.url()).searchParams.get("session")) throw new Error("the address does not name the session");
  await page.reload();
  await page.locator(".msg.assistant", { hasText: "not run" }).waitFor();

  // 360 px wide: still usable (nothing wider than the screen).
  await page.setViewportSize({ width: 360, height: 740 });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth);
  if (overflow > 360) throw new Error(`the page is ${overflow} px wide at 360 px`);
  await shot("narrow");
  console.log(`web flow ok: ${step} screenshots in ${shots}`);
} finally {
  await browser.close();
}
if (errors.length) {
  console.error(errors.join("\n"));
  process.exit(1);
}
