// The web UI in Debian's chromium with a small context window: the second of two long prompts
// makes the controller compact on its own during the turn; the banner says so ("Compacted
// automatically"), the transcript shows the summary and the turn, and the turn's answer. One screenshot,
// `auto-compacted.png`; any console error or page error fails the run.
//
//   node auto.mjs URL WORKSPACE SCREENSHOT_DIR
import { launch } from "./launch.mjs";

const run = await launch("auto.mjs");
const { url, browser } = run;
try {
  const page = run.watch(await browser.newPage({ viewport: { width: 1000, height: 700 } }));

  await page.goto(url);
  await page.getByText(/No session yet/).waitFor();
  const prompt = page.locator("#prompt");
  const long = "x".repeat(30000);
  await prompt.fill(`first ${long}`);
  await prompt.press("Enter");
  await page.locator(".msg.assistant", { hasText: "zero" }).waitFor();
  await page.locator("#send:not([disabled])").waitFor();
  if (await page.locator(".msg.note").count()) throw new Error("the first turn compacted");

  await prompt.fill(`second ${long}`);
  await prompt.press("Enter");
  await page.locator(".msg.assistant", { hasText: "one" }).waitFor();
  await page.locator("#send:not([disabled])").waitFor();
  await page
    .locator("#banner", { hasText: /^Compacted automatically .*: about \S+ → \S+ tokens\. The full conversation stays in Versions\./ })
    .waitFor();
  await page.locator(".msg.note.compaction", { hasText: "SUMMARY: the user sent a long text." }).waitFor();
  const turns = await page.locator(".msg.user[data-turn]").allTextContents();
  if (turns.length !== 1 || !turns[0].startsWith("second")) throw new Error(`after compacting the turns are ${turns.length}`);
  // the summary comes first, then the turn it kept
  const order = await page.evaluate(() =>
    [...document.querySelectorAll("#rows > *")].map((e) => e.className),
  );
  if (order[0] !== "msg note compaction" || !order[1]?.includes("user")) throw new Error(`the transcript runs ${JSON.stringify(order)}`);
  // the notice of the compaction (a long line) leaves the composer usable
  const box = await prompt.boundingBox();
  if (!box || box.width < 400) throw new Error(`the prompt is ${box?.width} px wide`);
  await page.locator(".msg.note").scrollIntoViewIfNeeded();
  await run.shot(page, "auto-compacted");
  console.log("auto-compaction flow ok");
} finally {
  await run.close();
}
