// A session another Retrace holds, in Debian's chromium at 1280×800 and 390×844: this page's
// server (B) was started while another `retrace serve` (A) on the same workspace holds its
// newest session. B's page opens the newest session that is free, not the held one; the picker
// says which one is held. Opened anyway, the held one shows read-only: its transcript and
// Versions, a panel saying which process holds it and since when with a New session button, the
// composer, plan mode, the model and every rewind action disabled, no Switch or Retire; no request
// is refused (no 409) and the console stays clean. New session starts one here. Once A stops, the
// held session opens here by itself.
//
//   node held.mjs URL WORKSPACE SCREENSHOT_DIR URL_OF_A PID_OF_A FREE_SESSION
// A line `STOP_A` asks the test to stop A; it answers with a line once A is gone.
import readline from "node:readline";
import { launch } from "./launch.mjs";

const run = await launch("held.mjs");
const { url, browser } = run;
const [urlA, pidA, free] = process.argv.slice(5);
if (!urlA || !pidA || !free) {
  console.error("usage: node held.mjs URL WORKSPACE SCREENSHOT_DIR URL_OF_A PID_OF_A FREE_SESSION");
  process.exit(2);
}
const input = readline.createInterface({ input: process.stdin });
const lines = input[Symbol.asyncIterator]();
const token = new URL(urlA).searchParams.get("token");
const base = (u) => u.split("?")[0].replace(/\/$/, "");

/** A's API, with the token. */
async function onA(method, p, body) {
  const res = await fetch(`${base(urlA)}${p}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body ? { "Content-Type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`A: ${method} ${p}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

const waitFor = async (what, f, ms = 15000) => {
  const start = Date.now();
  while (!(await f())) {
    if (Date.now() - start > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
};

try {
  // A makes a session and runs a turn in it: A holds it from now on.
  const { session_id: held } = await onA("POST", "/api/sessions", {});
  await onA("POST", `/api/sessions/${held}/messages`, { prompt: "the held prompt" });
  await waitFor("A's turn to end", async () => {
    const snap = await onA("GET", `/api/sessions/${held}?include=items`);
    return !snap.status.running && snap.items.some((i) => i.kind === "assistant_text");
  });

  /** Opens B's page at `viewport`, watching every answer for a refusal. */
  const open = async (viewport, tag, address = url) => {
    const page = run.watch(await (await browser.newContext({ viewport })).newPage(), tag);
    page.on("response", (r) => {
      if (r.status() === 409) run.errors.push(`${tag}: ${r.request().method()} ${r.url()} answered 409`);
    });
    await page.goto(address);
    return page;
  };
  const sessionOf = (page) => new URL(page.url()).searchParams.get("session");

  // B's page opens the newest free session, not the one A holds.
  const page = await open({ width: 1280, height: 800 }, "desktop");
  await waitFor("a session to open", () => sessionOf(page) != null);
  if (sessionOf(page) !== free) throw new Error(`B opened ${sessionOf(page)}, not the free session ${free} (A holds ${held})`);
  const option = page.locator(`#session-select option[value="${held}"]`);
  await option.waitFor({ state: "attached" });
  if (!(await option.textContent()).includes("open in another Retrace")) throw new Error(`the picker names the held session ${await option.textContent()}`);

  /** The held session shown read-only on `page`. */
  const readOnly = async (page, tag) => {
    const panel = page.locator("#banner.held");
    await panel.waitFor();
    const says = await panel.textContent();
    for (const want of [`This session is open in another Retrace (pid ${pidA}, since `, "UTC). Close it there, or start a new session here."]) {
      if (!says.includes(want)) throw new Error(`${tag}: the panel says ${JSON.stringify(says)}`);
    }
    await panel.getByRole("button", { name: "New session" }).waitFor();
    await page.locator(".msg.user", { hasText: "the held prompt" }).waitFor();
    await page.locator(".msg.tool summary", { hasText: "Created held.txt" }).waitFor();
    for (const sel of ["#prompt", "#send", "#plan-mode", "#model-select"]) {
      if (!(await page.locator(sel).isDisabled())) throw new Error(`${tag}: ${sel} is enabled`);
    }
    if ((await page.locator("#compact").getAttribute("aria-disabled")) !== "true") throw new Error(`${tag}: Compact is offered`);
    // every rewind action is there, unavailable, saying why
    const p = page.locator(".msg.user").first();
    await p.locator(".menu-toggle").click();
    const items = p.locator(".menu-list button");
    await items.first().waitFor();
    const states = await items.evaluateAll((bs) => bs.map((b) => [b.dataset.action, b.disabled, b.querySelector(".why")?.textContent ?? ""]));
    if (states.length !== 7 || states.some(([, disabled, why]) => !disabled || !why.includes("in use by process"))) {
      throw new Error(`${tag}: the rewind menu offers ${JSON.stringify(states)}`);
    }
    await run.shot(page, `held-${tag}`);
    await page.keyboard.press("Escape");
    // the Versions panel shows the heads, and offers nothing on them
    await page.locator("#versions-toggle").click();
    await page.locator(".head-name", { hasText: "main" }).waitFor();
    await page.locator("#checkpoints li", { hasText: "Turn 0" }).waitFor();
    if ((await page.locator("#heads button").count()) !== 0) throw new Error(`${tag}: a head can be switched or retired`);
    await page.locator("#versions-close").click();
  };

  // Opened anyway, from the picker: read-only.
  await page.locator("#session-select").selectOption(held);
  await readOnly(page, "desktop");
  run.check("the held session on the desktop");

  // On a phone too, from its address.
  const phone = await open({ width: 390, height: 844 }, "phone", `${url}&session=${encodeURIComponent(held)}`);
  await readOnly(phone, "phone");
  // New session starts one here, which can be written to.
  await phone.locator("#banner.held").getByRole("button", { name: "New session" }).click();
  await waitFor("a new session", () => sessionOf(phone) !== held);
  await phone.locator("#prompt:not([disabled])").waitFor();
  if (await phone.locator("#banner.held").isVisible()) throw new Error("the new session says it is held");
  run.check("the phone");

  // A stops: the desktop page, still on the held session, opens it by itself.
  console.log("STOP_A");
  await lines.next();
  await page.locator("#banner", { hasText: "no longer open in another Retrace" }).waitFor({ timeout: 20000 });
  await page.locator("#prompt:not([disabled])").waitFor();
  await page.locator("#send:not([disabled])").waitFor();
  await run.shot(page, "held-released");
  console.log("held: ok");
} finally {
  input.close();
  await run.close();
}
