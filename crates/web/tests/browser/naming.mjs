// The session picker names a new session by its first prompt while that first turn still runs
// (the trial saw "New session · just now" until the turn ended), in Debian's chromium at
// 1280×800: the turn waits for a shell command's approval, and meanwhile the picker's chosen
// entry reads "PROMPT · just now · 1 turn"; a second new session, before its prompt, is "New
// session". Any console or page error fails the run.
//
//   node naming.mjs URL WORKSPACE SCREENSHOT_DIR
import { launch } from "./launch.mjs";

const run = await launch("naming.mjs");
const { url, browser } = run;

try {
  const page = run.watch(await browser.newPage({ viewport: { width: 1280, height: 800 } }));
  const prompt = page.locator("#prompt");
  /** The picker's chosen entry, as it reads. */
  const chosen = () => page.locator("#session-select").evaluate((s) => s.options[s.selectedIndex]?.textContent ?? "");

  await page.goto(url);
  await page.getByText(/No session yet/).waitFor();
  await prompt.fill("name this session by me\nnot by this second line");
  await prompt.press("Enter");
  await page.locator(".approval", { hasText: "echo named" }).waitFor();
  // mid-turn: still running
  if (!(await page.locator("#cancel").isVisible())) throw new Error("the turn is not running");
  await page.waitForFunction(
    () => {
      const s = document.querySelector("#session-select");
      return s.options[s.selectedIndex]?.textContent.startsWith("name this session by me ·");
    },
    null,
    { timeout: 5000 },
  );
  const label = await chosen();
  if (!/^name this session by me · just now · (0 turns|1 turn)$/.test(label)) throw new Error(`mid-turn the picker reads ${JSON.stringify(label)}`);
  await run.shot(page, "naming-mid-turn");

  // the turn ends; a new session is "New session" until its own prompt
  await page.locator(".approval").getByRole("button", { name: "Deny" }).click();
  await page.locator(".msg.assistant", { hasText: "not run" }).waitFor();
  await page.locator("#send:not([disabled])").waitFor();
  await page.locator("#new-session").click();
  await page.waitForFunction(() => {
    const s = document.querySelector("#session-select");
    return s.options[s.selectedIndex]?.textContent.startsWith("New session");
  });
  const options = await page.locator("#session-select option").allTextContents();
  if (!options.some((o) => o.startsWith("name this session by me · "))) throw new Error(`the sessions read ${JSON.stringify(options)}`);
  console.log("naming ok");
} finally {
  await run.close();
}
