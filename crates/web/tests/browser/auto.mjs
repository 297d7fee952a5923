// The web UI in Debian's chromium with a small context window: the second of two long prompts
// makes the controller compact on its own during the turn; the banner says so ("Compacted
// automatically"), the transcript shows the summary and the turn, and the turn's answer. One screenshot,
// `auto-compacted.png`; any console error or page error fails the run.
//
//   node auto.mjs URL WORKSPACE SCREENSHOT_DIR
import { chromium } from "playwright-core";
import fs from "node:fs";
import path from "node:path";

const [url, ws, shots] = process.argv.slice(2);
if (!url || !ws || !shots) {
  console.error("usage: node auto.mjs URL WORKSPACE SCREENSHOT_DIR");
  process.exit(2);
}
fs.mkdirSync(shots, { recursive: true });

const errors = [];
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  args: ["--no-sandbox"],
});
try {
  const page = await browser.newPage({ viewport: { width: 1000, height: 700 } });
  page.setDefaultTimeout(15000);
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(`console: ${m.text()}`);
  });
  page.on("pageerror", (e) => errors.push(`page: ${e.message}`));

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
  await page.screenshot({ path: path.join(shots, "auto-compacted.png") });
  if (errors.length) throw new Error(errors.join("; "));
  console.log("auto-compaction flow ok");
} finally {
  await browser.close();
}
if (errors.length) {
  console.error(errors.join("\n"));
  process.exit(1);
}
