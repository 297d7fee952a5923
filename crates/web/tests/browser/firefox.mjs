// The web UI's smoke test in Debian's firefox-esr, driven by puppeteer-core over WebDriver BiDi
// (no browser download): open the page with `?token=`, one turn through the composer (its answer
// streamed in while the turn runs, and its tool call), open the prompt's rewind menu and restore code through
// the preview (the file goes from the disk; the focus comes back to the action), the same preview
// by keyboard (nothing would change: it says so; Shift+Tab wraps inside it) closed with Esc, undo from the banner (the file is back),
// plan mode on (the indicator shows), a reload (still on, and the same rows as before it), plan
// mode off. One screenshot,
// `firefox.png`; any console error or page error fails the run.
//
//   node firefox.mjs URL WORKSPACE SCREENSHOT_DIR
import fs from "node:fs";
import { launch } from "./launch.mjs";

const started = Date.now();
const run = await launch("firefox.mjs", { firefox: true, viewport: { width: 1000, height: 700 } });
const { url, browser, check, file } = run;
try {
  const page = run.watch(await browser.newPage());
  const waitFor = async (what, f) => {
    const start = Date.now();
    while (!f()) {
      if (Date.now() - start > 15000) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  /** Waits until an element matching `selector` holds `text`. */
  const waitText = (selector, text) =>
    page.waitForFunction(
      (sel, t) => [...document.querySelectorAll(sel)].some((e) => e.textContent.includes(t)),
      {},
      selector,
      text,
    );
  const activeAction = () =>
    page.evaluate(() => {
      const a = document.activeElement;
      return `${a?.closest(".msg.user")?.dataset.turn ?? "-"} ${a?.dataset?.action ?? a?.tagName}`;
    });
  // The focus settles on turn 0's Restore code within 5 s (the dialog's close event is async).
  const expectOnAction = async (what) => {
    const start = Date.now();
    while ((await activeAction()) !== "0 menu") {
      if (Date.now() - start > 5000) throw new Error(`after ${what} the focus is on ${await activeAction()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  /** The transcript's rows: each one's classes and text. */
  const rows = () =>
    page.evaluate(() =>
      [...document.querySelectorAll("#rows > *")].map((r) => `${r.className} | ${r.textContent.replace(/\s+/g, " ").trim()}`),
    );
  const dialogOpen = () => page.evaluate(() => document.querySelector("#rewind-dialog").open);

  await page.goto(url);
  await waitText("#transcript", "No session yet");
  check("opening the page");

  // One turn through the composer: Enter sends; the answer streams in after the tool call, shown
  // while the turn still runs (before the transcript is read again at its end).
  await page.evaluate(() => {
    new MutationObserver(() => {
      const live = [...document.querySelectorAll(".msg.assistant")].some((e) => e.textContent.includes("wrote one"));
      if (live && document.body.classList.contains("running")) window.streamed = true;
    }).observe(document.querySelector("#transcript"), { childList: true, subtree: true, characterData: true });
  });
  await page.click("#prompt");
  await page.keyboard.type("write one");
  await page.keyboard.press("Enter");
  await waitText(".msg.assistant", "wrote one");
  await waitText(".tool", "Created one.txt");
  await page.waitForSelector("#send:not([disabled])");
  if (!(await page.evaluate(() => window.streamed))) throw new Error("the answer was not streamed in");
  if (fs.readFileSync(file("one.txt"), "utf8") !== "1\n") throw new Error("the turn did not write one.txt");
  check("the turn");

  // The prompt's rewind menu: Restore code opens the preview, Confirm restores; the focus goes
  // back to the menu's button.
  const action = '.msg.user[data-turn="0"] button[data-action="restore_code"]';
  await page.click('.msg.user[data-turn="0"] .menu-toggle');
  await page.waitForSelector(action, { visible: true });
  await page.click(action);
  await page.waitForFunction(() => document.querySelector("#rewind-dialog").open);
  await waitText("#rewind-dialog", "one.txt");
  await page.click("#rewind-confirm");
  await waitText("#banner", "Restored code");
  await waitFor("one.txt to be removed", () => !fs.existsSync(file("one.txt")));
  if (await dialogOpen()) throw new Error("the preview stayed open");
  await expectOnAction("restoring code");
  check("restoring code");

  // The preview by keyboard: Enter opens the menu on its first action, arrows down to Restore
  // code, Enter opens the preview on Confirm, Esc closes it, the focus comes back.
  await page.keyboard.press("Enter");
  await page.waitForSelector(action, { visible: true });
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("ArrowDown");
  const chosen = await activeAction();
  if (chosen !== "0 restore_code") throw new Error(`the arrows went to ${chosen}`);
  await page.keyboard.press("Enter");
  await page.waitForFunction(() => document.querySelector("#rewind-dialog").open);
  const focused = await page.evaluate(() => document.activeElement.id);
  if (focused !== "rewind-confirm") throw new Error(`the preview opened with the focus on ${focused}`);
  // The file is already as it was: the preview says so, and its one button closes it.
  await waitText("#rewind-dialog .unchanged", "Nothing would change");
  if ((await page.evaluate(() => document.activeElement.textContent)) !== "Close") throw new Error("a preview that changes nothing offers more than Close");
  // Shift+Tab goes back over the preview's controls before Close (a file's name, which opens
  // its history), and from the first wraps to Close (no Cancel beside it).
  const before = await page.evaluate(() => {
    const d = document.querySelector("#rewind-dialog");
    const stops = [...d.querySelectorAll("button, input")].filter((x) => !x.disabled && x.getClientRects().length > 0);
    return stops.indexOf(document.activeElement);
  });
  for (let i = 0; i <= before; i++) {
    await page.keyboard.down("Shift");
    await page.keyboard.press("Tab");
    await page.keyboard.up("Shift");
  }
  const wrapped = await page.evaluate(() => document.activeElement.id);
  if (wrapped !== "rewind-confirm") throw new Error(`Shift+Tab from Close went to ${JSON.stringify(wrapped)}`);
  await page.keyboard.press("Escape");
  await page.waitForFunction(() => !document.querySelector("#rewind-dialog").open);
  await expectOnAction("Esc");

  // Undo from the banner: the file is back as it was.
  await page.click("#banner button.undo");
  await waitText("#banner", "Undone");
  await waitFor("one.txt to come back", () => fs.existsSync(file("one.txt")));
  if (fs.readFileSync(file("one.txt"), "utf8") !== "1\n") throw new Error("one.txt is not back as it was");
  await waitText(".msg.note", "Undid the restore of one.txt");
  const seen = await rows();
  check("undo");

  // Plan mode: the switch turns it on and the indicator shows above the composer.
  await page.click("#plan-mode");
  await page.waitForSelector("#plan-indicator", { visible: true });
  if (!(await page.evaluate(() => document.querySelector("#plan-mode").checked))) throw new Error("the plan switch is off");
  check("plan mode");

  // A reload (the address names the session) opens it again, plan mode still on; the live
  // connection it drops is no error.
  await page.reload();
  await waitText(".msg.assistant", "wrote one");
  await page.waitForSelector("#plan-indicator", { visible: true });
  if (!(await page.evaluate(() => document.querySelector("#plan-mode").checked))) throw new Error("plan mode is off after the reload");
  // the same rows as seen live: the prompt, its checkpoint, the call, the answer, the two notes
  const reloaded = await rows();
  if (JSON.stringify(reloaded) !== JSON.stringify(seen) || seen.length !== 6) {
    throw new Error(`after the reload the rows are\n${reloaded.join("\n")}\nnot\n${seen.join("\n")}`);
  }
  await run.shot(page, "firefox");
  await page.click("#plan-mode");
  await page.waitForSelector("#plan-indicator", { hidden: true });
  check("plan mode off");
  console.log(`firefox flow ok (${await browser.version()}) in ${((Date.now() - started) / 1000).toFixed(1)} s`);
} finally {
  await run.close();
}
