// The page's status line, in Debian's chromium at 1280×800: after each turn it reads as the
// terminal UI's — the model, how full its context is, the session's tokens and their cost at the
// configured price — in the controller's words (the snapshot's `usage.says`), never the last
// request's raw count; a reload shows the same line; a notice shows beside it, not in its place.
// Any console or page error fails the run.
//
//   node status.mjs URL WORKSPACE SCREENSHOT_DIR
import { launch } from "./launch.mjs";

const run = await launch("status.mjs");
const { url, browser } = run;

const same = (what, got, want) => {
  if (JSON.stringify(got) !== JSON.stringify(want)) throw new Error(`${what}:\n got: ${JSON.stringify(got)}\nwant: ${JSON.stringify(want)}`);
};

try {
  const page = run.watch(await browser.newPage({ viewport: { width: 1280, height: 800 } }));
  const prompt = page.locator("#prompt");
  const line = page.locator("#usage");
  const sid = () => new URL(page.url()).searchParams.get("session");
  const snapshot = () => page.evaluate(async (id) => (await fetch(`/api/sessions/${id}?include=items`)).json(), sid());
  const send = async (text, answer) => {
    await prompt.fill(text);
    await prompt.press("Enter");
    await page.locator(".msg.assistant", { hasText: answer }).waitFor();
    await page.locator("#send:not([disabled])").waitFor();
  };
  /**
   * What the line should read: the model as the terminal UI's line names it (its spec; on a phone
   * short), then the tally's words.
   */
  const expected = async (short = false) => {
    const snap = await snapshot();
    const model = short ? snap.status.model_spec.split("/").pop() : snap.status.model_spec;
    return [model, ...snap.usage.says].join(" · ");
  };

  await page.goto(url);
  await page.getByText(/No session yet/).waitFor();
  await send("first", "one");
  await line.filter({ hasText: "1.2k in 300 out" }).waitFor();
  const first = await line.textContent();
  same("the status line after a turn", first, await expected());
  // 1,200 in at $1 and 300 out at $2 a million tokens
  if (!/^script:\/.*\/script\.json · \d+% context · 1\.2k in 300 out · \$0\.0018$/.test(first)) throw new Error(`the line reads ${JSON.stringify(first)}`);
  if (first.includes("tokens")) throw new Error(`the line shows a raw count: ${first}`);

  await send("second", "two");
  await line.filter({ hasText: "3.6k in 600 out" }).waitFor();
  const second = await line.textContent();
  same("the status line after two turns", second, await expected());
  if (!second.endsWith(" · 3.6k in 600 out · $0.0048")) throw new Error(`the line reads ${JSON.stringify(second)}`);
  await run.shot(page, "status-line");

  // a reload reads the same tally from the snapshot
  await page.reload();
  await page.locator(".msg.assistant", { hasText: "two" }).waitFor();
  await line.filter({ hasText: "3.6k in 600 out" }).waitFor();
  same("the status line after a reload", await line.textContent(), second);
  // nothing else writes on it
  same("the activity beside it", await page.locator("#activity").textContent(), "");
  // on a phone the line keeps to one row (a trial saw it wrap onto three); its title holds it whole
  await page.setViewportSize({ width: 390, height: 844 });
  const box = await line.boundingBox();
  if (!box || box.height > 30) throw new Error(`the phone's status line is ${box?.height}px high`);
  const title = await line.getAttribute("title");
  if (!title?.includes("3.6k in 600 out")) throw new Error(`its title reads ${JSON.stringify(title)}`);
  // there the model goes by its short name, the tally after it
  await line.filter({ hasText: /^script\.json · / }).waitFor();
  same("the phone's status line", await line.textContent(), await expected(true));
  await run.shot(page, "status-line-phone");
  console.log("status line ok");
} finally {
  await run.close();
}
