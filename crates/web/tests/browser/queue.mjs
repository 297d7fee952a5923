// A prompt queued while a turn runs, in Debian's chromium at 1280×800 and 390×844, as the terminal
// UI queues one: the turn waits for a shell command's approval; Enter then queues the prompt
// (shown under the transcript, nothing sent), Esc removes it, a second one joins the first on a new
// line ("(+1 line)"), Edit takes it back into the prompt box to change, the Queue button queues it
// again; once the turn ends the queued prompt is sent and answered. A turn that is cancelled puts
// its queued prompt back into the prompt box, unsent. On the phone the queued row's buttons
// measure at least 44 px. Any console or page error fails the run.
//
//   node queue.mjs URL WORKSPACE SCREENSHOT_DIR
import { launch } from "./launch.mjs";

const run = await launch("queue.mjs");
const { url, browser } = run;

const same = (what, got, want) => {
  if (JSON.stringify(got) !== JSON.stringify(want)) throw new Error(`${what}:\n got: ${JSON.stringify(got)}\nwant: ${JSON.stringify(want)}`);
};

try {
  const page = run.watch(await browser.newPage({ viewport: { width: 1280, height: 800 } }));
  const prompt = page.locator("#prompt");
  const queued = page.locator("#queued");
  const sent = [];
  page.on("request", (r) => {
    if (r.method() === "POST" && r.url().endsWith("/messages")) sent.push(r.postDataJSON().prompt);
  });

  await page.goto(url);
  await page.getByText(/No session yet/).waitFor();
  await prompt.fill("run the check");
  await prompt.press("Enter");
  // the turn waits for the command's approval: it runs
  await page.locator(".approval", { hasText: "echo checked" }).waitFor();
  await page.locator("#cancel").waitFor();
  if (!(await page.locator("#send").isHidden()) || !(await page.locator("#queue").isVisible())) throw new Error("a running turn does not offer Queue in place of Send");

  // Enter queues: shown under the transcript, the prompt box emptied, nothing sent
  await prompt.fill("and then this");
  await prompt.press("Enter");
  await queued.filter({ hasText: "↳ Queued: and then this" }).waitFor();
  same("the prompt box after queueing", await prompt.inputValue(), "");
  same("the prompts sent", sent, ["run the check"]);
  const below = await page.evaluate(() => {
    const rows = document.querySelector("#rows").getBoundingClientRect();
    const q = document.querySelector("#queued").getBoundingClientRect();
    return q.top >= rows.bottom - 1;
  });
  if (!below) throw new Error("the queued prompt is not under the transcript");
  await run.shot(page, "queue-queued");

  // Esc removes it
  await prompt.press("Escape");
  await queued.waitFor({ state: "hidden" });
  await page.locator("#activity", { hasText: "Queued prompt removed" }).waitFor();

  // two prompts join; Edit takes them back; the Queue button queues again
  await prompt.fill("first queued");
  await prompt.press("Enter");
  await prompt.fill("second queued");
  await prompt.press("Enter");
  await queued.filter({ hasText: "first queued (+1 line)" }).waitFor();
  await queued.getByRole("button", { name: "Edit" }).click();
  await queued.waitFor({ state: "hidden" });
  same("the prompt box after Edit", await prompt.inputValue(), "first queued\nsecond queued");
  await prompt.fill("the queued prompt");
  await page.locator("#queue").click();
  await queued.filter({ hasText: "↳ Queued: the queued prompt" }).waitFor();
  same("the prompts sent while the turn runs", sent, ["run the check"]);
  // ↑ in the empty prompt box takes it back too, and Enter queues it again
  await prompt.focus();
  await prompt.press("ArrowUp");
  same("the prompt box after ↑", await prompt.inputValue(), "the queued prompt");
  await prompt.press("Enter");
  await queued.filter({ hasText: "the queued prompt" }).waitFor();

  // the turn ends: the queued prompt is sent and answered
  await page.locator(".approval").getByRole("button", { name: "Deny" }).click();
  await page.locator(".msg.user", { hasText: "the queued prompt" }).waitFor();
  await page.locator(".msg.assistant", { hasText: "the queued answer" }).waitFor();
  await page.locator("#send:not([disabled])").waitFor();
  if (await queued.isVisible()) throw new Error("the queued row stays after it was sent");
  same("the prompts sent", sent, ["run the check", "the queued prompt"]);
  await run.shot(page, "queue-sent");

  // a cancelled turn gives its queued prompt back, unsent
  await prompt.fill("check again");
  await prompt.press("Enter");
  await page.locator(".approval", { hasText: "echo again" }).waitFor();
  await prompt.fill("never sent");
  await prompt.press("Enter");
  await queued.filter({ hasText: "never sent" }).waitFor();
  await page.locator("#cancel").click();
  await page.locator("#send:not([disabled])").waitFor();
  await page.locator("#activity", { hasText: "the queued prompt is back in the prompt box" }).waitFor();
  same("the prompt box after a cancelled turn", await prompt.inputValue(), "never sent");
  // a cancel is said as one, not as a failure
  await page.locator("#banner", { hasText: /was cancelled/ }).waitFor();
  same("the cancel's banner", (await page.locator("#banner").innerText()).includes("failed"), false);
  same("the prompts sent", sent, ["run the check", "the queued prompt", "check again"]);
  await prompt.fill("");

  // on a phone: the queued row's buttons are touch targets
  await page.setViewportSize({ width: 390, height: 844 });
  await prompt.fill("once more");
  await prompt.press("Enter");
  await page.locator(".approval", { hasText: "echo last" }).waitFor();
  await prompt.fill("queued on the phone");
  await prompt.press("Enter");
  await queued.filter({ hasText: "queued on the phone" }).waitFor();
  for (const name of ["Edit", "Remove the queued prompt"]) {
    const box = await queued.getByRole("button", { name, exact: true }).boundingBox();
    if (!box || box.height < 44 || box.width < 44) throw new Error(`${name} measures ${JSON.stringify(box)}`);
  }
  await run.shot(page, "queue-phone");
  await queued.getByRole("button", { name: "Remove the queued prompt" }).click();
  await page.locator("#cancel").click();
  await page.locator("#send:not([disabled])").waitFor();
  console.log("queue ok");
} finally {
  await run.close();
}
