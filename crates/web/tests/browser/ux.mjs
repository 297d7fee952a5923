// The page as a day's work sees it, at 1280×800 and at 390×844 (a phone), in Debian's chromium:
// the header's one row (the model as a select, the workspace and its git branch, the sessions by
// first prompt and relative time), the empty state, markdown rendered and sanitised (a model
// answer holding <img onerror>, <script> and javascript: links runs nothing), tool rows that read
// like the terminal UI's (their items' titles: a file written again reads "Edited") with file
// chips, one rewind control per prompt opening a menu with the risky actions marked (the last
// prompt's whole in view, no item under the composer, also when the composer is made taller),
// fork and summarize asking first with Confirm as the primary button, a preview that would change
// nothing saying so, a restore's toast that pushes nothing, the model switched, the Versions panel (a
// drawer on the phone). On the phone the model shows whole by its short name (its title and list
// naming it in full), and every button, link, select and summary shown is measured: at least 44
// px. Any console or page error fails the run.
//
//   node ux.mjs URL WORKSPACE SCREENSHOT_DIR
import fs from "node:fs";
import path from "node:path";
import { launch } from "./launch.mjs";

const run = await launch("ux.mjs");
const { url, ws, browser, file } = run;

const waitFor = async (what, f) => {
  const start = Date.now();
  while (!(await f())) {
    if (Date.now() - start > 15000) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
};

/** The page of the run now, for a screenshot when it fails. */
let current = null;

/** The whole flow at one viewport; `tag` names its screenshots. */
async function day(viewport, tag) {
  const phone = viewport.width < 700;
  const context = await browser.newContext({ viewport });
  const page = run.watch(await context.newPage(), tag);
  current = page;
  const shot = (name) => run.shot(page, `ux-${tag}-${name}`);
  /** Every shown button, link, select, summary and checkbox's or radio's label smaller than 44 px (on the phone). */
  const small = () =>
    page.evaluate(() =>
      [...document.querySelectorAll("button, a[href], select, summary, label:has(> input[type=checkbox]), label:has(> input[type=radio])")]
        .filter((e) => e.getClientRects().length > 0 && getComputedStyle(e).visibility !== "hidden")
        .map((e) => ({ e, r: e.getBoundingClientRect() }))
        .filter(({ e, r }) => r.height < 43.5 || (e.tagName === "BUTTON" && r.width < 43.5))
        .map(({ e, r }) => `${e.tagName.toLowerCase()}.${e.className} "${e.textContent.trim().slice(0, 30)}" ${Math.round(r.width)}×${Math.round(r.height)}`),
    );
  /**
   * Prompt `p`'s open menu lies whole in the transcript's visible area (on the phone, a sheet: in
   * the screen), and a click at the middle of each item reaches it: no composer, toast or header
   * covers it.
   */
  const menuInView = async (p, where) => {
    const bad = await p.locator(".menu-list").evaluate((list, phone) => {
      const r = list.getBoundingClientRect();
      const area = phone ? { top: 0, bottom: innerHeight, left: 0, right: innerWidth } : document.querySelector("#transcript").getBoundingClientRect();
      const out = [];
      if (r.top < area.top - 0.5 || r.bottom > area.bottom + 0.5 || r.left < area.left - 0.5 || r.right > area.right + 0.5) {
        out.push(`the list (${Math.round(r.top)}–${Math.round(r.bottom)}) is not within the area (${Math.round(area.top)}–${Math.round(area.bottom)})`);
      }
      for (const b of list.querySelectorAll("button")) {
        const br = b.getBoundingClientRect();
        const hit = document.elementFromPoint(br.left + br.width / 2, br.top + br.height / 2);
        if (!b.contains(hit)) out.push(`${b.dataset.action} is under ${hit ? `${hit.tagName.toLowerCase()}#${hit.id}.${hit.className}` : "nothing"}`);
      }
      return out;
    }, phone);
    if (bad.length) throw new Error(`the menu is not whole in view (${where}): ${bad.join("; ")}`);
  };
  const touchTargets = async (where) => {
    if (!phone) return;
    const bad = await small();
    if (bad.length) throw new Error(`touch targets under 44 px (${where}): ${bad.join("; ")}`);
  };
  const api = (p, init) =>
    page.evaluate(async ([p, init]) => {
      const r = await fetch(p, init);
      return r.json();
    }, [p, init]);
  const sid = () => page.evaluate(() => new URL(location.href).searchParams.get("session"));

  await page.goto(url);
  // The header is one row: the model (a select), the workspace and its branch (not on a phone),
  // the sessions, new session, versions.
  const header = page.locator("header.bar");
  await page.locator("#model-select option").first().waitFor({ state: "attached" });
  if (phone) {
    // a session from the desktop run is opened: a new one shows the empty state
    await page.locator("#new-session").click();
  }
  const empty = page.locator(".empty", { hasText: "Every edit can be taken back" });
  await empty.waitFor();
  const model = await page.locator("#model-select").inputValue();
  if (!model.startsWith("script:")) throw new Error(`the model select shows ${JSON.stringify(model)}`);
  const emptyText = await empty.textContent();
  for (const want of ["Rewind", "undone", model, ws]) {
    if (!emptyText.includes(want)) throw new Error(`the empty state does not say ${JSON.stringify(want)}: ${emptyText}`);
  }
  if (!emptyText.includes("trial")) throw new Error(`the empty state does not name the branch: ${emptyText}`);
  if (!phone) {
    await page.locator("#branch", { hasText: "trial" }).waitFor();
    const name = await page.locator("#workspace").textContent();
    if (name !== path.basename(ws)) throw new Error(`the header names the workspace ${JSON.stringify(name)}`);
  }
  const rowHeight = await header.evaluate((h) => h.getBoundingClientRect().height);
  if (rowHeight > (phone ? 56 : 52)) throw new Error(`the header is ${rowHeight} px high: more than one row`);
  /**
   * On the phone the model shows whole by its short name (`want`) on the select's face, the select
   * over it (a tap opens it), its title and its list naming the model in full.
   */
  const modelShown = async (want, full) => {
    if (!phone) return;
    await page.locator("#model-face", { hasText: want }).waitFor();
    const m = await page.evaluate(() => {
      const face = document.querySelector("#model-face");
      const select = document.querySelector("#model-select");
      const r = face.getBoundingClientRect();
      return {
        text: face.textContent,
        whole: face.scrollWidth <= face.clientWidth,
        width: Math.round(r.width),
        tapped: document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2) === select,
        title: select.title,
        listed: [...select.options].map((o) => o.textContent),
      };
    });
    if (m.text !== want || !m.whole) throw new Error(`the phone's model face shows ${JSON.stringify(m.text)} (whole: ${m.whole}, ${m.width} px), not ${want}`);
    if (!m.tapped) throw new Error("a tap on the model's face does not reach the select");
    if (!m.title.includes(full) || !m.listed.includes(full)) throw new Error(`the model's full name is not in its title and list: ${JSON.stringify(m)}`);
  };
  await modelShown(path.basename(model.slice("script:".length)), model);
  await touchTargets("empty");
  await shot("empty");

  // A turn whose answer is markdown holding HTML and javascript: links: rendered, and inert.
  const prompt = page.locator("#prompt");
  await prompt.fill("write calc");
  await prompt.press("Enter");
  const answer = page.locator(".msg.assistant", { hasText: "Done" });
  await answer.locator(".md h2", { hasText: "Done" }).waitFor();
  await page.locator("#send:not([disabled])").waitFor();
  for (const sel of [".md strong", ".md em", ".md p code", ".md ul li", ".md blockquote", ".md pre code", ".md table td", ".md h2"]) {
    if ((await answer.locator(sel).count()) === 0) throw new Error(`the answer has no ${sel}`);
  }
  const link = answer.locator('a[href="https://example.com/docs"]');
  if ((await link.getAttribute("target")) !== "_blank" || !(await link.getAttribute("rel")).includes("noopener")) {
    throw new Error("a link does not open apart from the page");
  }
  const inert = await answer.evaluate((a) => ({
    pwned: window.__pwned ?? null,
    img: a.querySelectorAll("img").length,
    script: a.querySelectorAll("script").length,
    js: [...a.querySelectorAll("a")].filter((x) => /^\s*javascript:/i.test(x.getAttribute("href") ?? "")).length,
    on: [...a.querySelectorAll("*")].filter((x) => [...x.attributes].some((at) => at.name.startsWith("on"))).length,
    text: a.textContent,
  }));
  if (inert.pwned !== null || inert.img || inert.script || inert.js || inert.on) {
    throw new Error(`the model's HTML is live: ${JSON.stringify({ ...inert, text: undefined })}`);
  }
  if (!inert.text.includes("<img src=x onerror") || !inert.text.includes("<script>")) {
    throw new Error(`the model's HTML is not shown as text: ${inert.text}`);
  }
  // clicking the javascript: links does nothing either
  await answer.getByText("click me").click();
  await answer.getByText("raw link").click();
  if ((await page.evaluate(() => window.__pwned ?? null)) !== null) throw new Error("a javascript: link ran");

  // The tool row reads like the terminal UI's; its file name is a chip that opens the history.
  const created = page.locator(".msg.tool summary", { hasText: "Created calc/ops.py +2 −0" });
  await created.waitFor();
  await created.locator(".file-link.chip").click();
  await page.locator("#history-dialog[open]").waitFor();
  await page.locator("#history-close").click();

  // A second turn: an edit, and a shell command allowed once that exits 1.
  await prompt.fill("edit and test");
  await prompt.press("Enter");
  const approval = page.locator(".approval", { hasText: "echo testing" });
  await approval.waitFor();
  await touchTargets("approval");
  await approval.getByRole("button", { name: "Allow once" }).click();
  await page.locator(".msg.assistant", { hasText: "edited and tested" }).waitFor();
  await page.locator("#send:not([disabled])").waitFor();
  await page.locator(".msg.tool summary", { hasText: "Edited calc/ops.py +1 −0" }).waitFor();
  // a file written again that was there reads as edited, as in the terminal UI
  await page.locator(".msg.tool summary", { hasText: "Edited calc/ops.py +1 −1" }).waitFor();
  await page.locator(".msg.tool summary", { hasText: /Ran echo testing; exit 1 · exit 1/ }).waitFor();
  // every tool row says its item's title, the words every frontend shows
  const snapshot = await api(`/api/sessions/${await sid()}?include=items`);
  const calls = snapshot.items.filter((i) => i.kind === "tool_call");
  if (calls.length !== 4) throw new Error(`${calls.length} tool calls in the items`);
  for (const c of calls) {
    const headline = await page.locator(`.msg.tool[data-item="${c.id}"] .headline`).textContent();
    if (!headline.startsWith(c.title)) throw new Error(`the row of ${c.id} reads ${JSON.stringify(headline)}, not its title ${JSON.stringify(c.title)}`);
  }
  await touchTargets("two turns");
  await shot("turns");

  // One rewind control per prompt, its actions shown only in its menu, in the entry's order; the
  // ones that change files are marked.
  const prompts = page.locator(".msg.user");
  if ((await prompts.count()) !== 2) throw new Error("not two prompts");
  for (let i = 0; i < 2; i++) {
    const p = prompts.nth(i);
    if ((await p.locator(".menu-toggle").count()) !== 1) throw new Error(`prompt ${i} has not one rewind control`);
    if (!(await p.locator(".menu-toggle").isVisible())) throw new Error(`prompt ${i}'s rewind control is hidden`);
    if (await p.locator(".menu-list").isVisible()) throw new Error(`prompt ${i}'s actions show before its menu opens`);
  }
  const second = prompts.nth(1);
  const openMenu = async (p) => {
    await p.locator(".menu-toggle").click();
    await p.locator(".menu-list").waitFor();
  };
  await openMenu(second);
  const id = await sid();
  const entries = await api(`/api/sessions/${id}/checkpoints`);
  const want = entries.entries.find((e) => e.turn === 1).actions;
  const items = second.locator(".menu-list button");
  const shown = await items.evaluateAll((bs) => bs.map((b) => [b.dataset.action, b.querySelector(".label").textContent, b.classList.contains("risky")]));
  const expected = want.map((a) => [a.action, a.label, a.action === "restore_code" || a.action === "restore_both"]);
  if (JSON.stringify(shown) !== JSON.stringify(expected)) throw new Error(`the menu shows ${JSON.stringify(shown)}, not ${JSON.stringify(expected)}`);
  await menuInView(second, "the last prompt");
  await touchTargets("menu");
  await shot("menu");
  // Esc closes it, the focus back on its button
  await page.keyboard.press("Escape");
  await second.locator(".menu-list").waitFor({ state: "hidden" });
  if (!(await second.locator(".menu-toggle").evaluate((b) => b === document.activeElement))) throw new Error("Esc did not give the focus back to the menu's button");
  if (!phone) {
    // The composer made taller (its box dragged to 300 px): the transcript is too short for the
    // menu below the last prompt and above it, which opens down and shows itself whole.
    await prompt.evaluate((t) => (t.style.height = "300px"));
    await page.evaluate(() => (document.querySelector("#transcript").scrollTop = 1e6));
    await openMenu(second);
    await menuInView(second, "a taller composer");
    await shot("menu-tall-composer");
    await page.keyboard.press("Escape");
    await second.locator(".menu-list").waitFor({ state: "hidden" });
    await prompt.evaluate((t) => (t.style.height = ""));
  }

  // Fork asks first; Confirm is the primary button, shown last; Cancel makes nothing.
  const heads = async () => (await api(`/api/sessions/${id}/heads`)).length;
  const before = await heads();
  const dialog = page.locator("#rewind-dialog");
  const confirm = page.locator("#rewind-confirm");
  await openMenu(second);
  await second.getByRole("menuitem", { name: "Fork from here" }).click();
  await dialog.getByText("A new head is made").waitFor();
  if (!(await confirm.evaluate((b) => b.classList.contains("primary")))) throw new Error("Confirm is not the primary button");
  const [cBox, xBox] = [await confirm.boundingBox(), await page.locator("#rewind-cancel").boundingBox()];
  if (cBox.x < xBox.x) throw new Error("Confirm is not the last button");
  if ((await confirm.textContent()) !== "Fork from here") throw new Error("Confirm does not say what it does");
  await touchTargets("fork confirmation");
  await shot("confirm-fork");
  await page.locator("#rewind-cancel").click();
  await page.waitForFunction(() => !document.querySelector("#rewind-dialog").open);
  if ((await heads()) !== before) throw new Error("a cancelled fork made a head");
  // summarize asks too
  await openMenu(second);
  await second.getByRole("menuitem", { name: "Summarize up to here" }).click();
  await dialog.getByText("The model summarizes the conversation before this prompt").waitFor();
  await page.locator("#rewind-cancel").click();
  await page.waitForFunction(() => !document.querySelector("#rewind-dialog").open);
  if ((await heads()) !== before) throw new Error("a cancelled summary made a head");

  // A file edited by hand: keeping it would change nothing, which the preview says; overwritten,
  // the restore's toast pushes nothing. The conflict's reason is in words.
  const ops = file("calc/ops.py");
  const mine = `# mine (${tag})\n`;
  fs.writeFileSync(ops, mine);
  await openMenu(second);
  await second.locator('.menu-list button[data-action="restore_code"]').click();
  await dialog.locator(".conflicts", { hasText: "edited outside Retrace" }).waitFor();
  if ((await dialog.textContent()).includes("manual_edit")) throw new Error("the preview shows a wire name");
  await dialog.getByLabel("Skip them (keep your changes)").check();
  const untracked = dialog.locator(".confirm-untracked input");
  if (await untracked.count()) await untracked.check();
  await touchTargets("preview");
  // Nothing in the preview is cut or broken inside a word: Cancel whole, each header on one line.
  const cramped = await dialog.evaluate((d) => {
    const out = [];
    for (const b of d.querySelectorAll(".dialog-actions button")) {
      if (b.getClientRects().length && b.scrollWidth > b.clientWidth + 1) out.push(`${b.textContent.trim()} is cut`);
    }
    // a text on one line has one box per text node
    const lines = (e) => {
      const r = document.createRange();
      r.selectNodeContents(e);
      return new Set([...r.getClientRects()].map((b) => Math.round(b.top))).size;
    };
    for (const th of d.querySelectorAll(".plan-files th")) if (lines(th) > 1) out.push(`the ${th.textContent} header breaks`);
    return out;
  });
  if (cramped.length) throw new Error(`the preview is cramped (${tag}): ${cramped.join("; ")}`);
  await shot("preview");
  // keeping the only file changes nothing: the preview says so and only closes
  await dialog.locator(".unchanged", { hasText: "Nothing would change" }).waitFor();
  if ((await confirm.textContent()) !== "Close") throw new Error(`keeping the only file offers ${await confirm.textContent()}`);
  // overwriting it is a restore: its toast pushes nothing
  await dialog.getByLabel("Overwrite them").check();
  if (await untracked.count()) await untracked.check();
  // (the restore adds its row to the transcript: the transcript's own box is what must not move)
  const area = page.locator("#transcript");
  const box0 = await area.boundingBox();
  await page.locator("#rewind-confirm:not(:disabled)", { hasText: "Overwrite them" }).click();
  const banner = page.locator("#banner", { hasText: "Restored code to before turn 1: 1 file written" });
  await banner.waitFor();
  if (fs.readFileSync(ops, "utf8") === mine) throw new Error("an overwritten file was not written");
  const box1 = await area.boundingBox();
  if (Math.abs(box1.y - box0.y) > 1 || Math.abs(box1.height - box0.height) > 1) {
    throw new Error(`the banner moved the transcript: ${JSON.stringify({ box0, box1 })}`);
  }
  // by the action that caused it: just under turn 1's prompt, whose menu made the restore
  const [bBox, row] = [await page.locator("#banner").boundingBox(), await page.locator('.msg.user[data-turn="1"]').boundingBox()];
  if (bBox.y < row.y + row.height || bBox.y > row.y + row.height + 40) {
    throw new Error(`the toast is not just under turn 1's prompt: ${JSON.stringify({ bBox, row })}`);
  }
  await touchTargets("toast");
  await shot("toast");
  await page.locator("#banner").getByRole("button", { name: "Undo" }).click();
  await page.locator("#banner", { hasText: "Undone" }).waitFor();
  if (fs.readFileSync(ops, "utf8") !== mine) throw new Error("the undo did not give the hand edit back");
  await page.locator("#banner").getByRole("button", { name: "Dismiss" }).click();

  // The sessions are named by first prompt and relative time, never by a timestamp.
  const options = await page.locator("#session-select option").allTextContents();
  if (!options.some((o) => /^write calc · (just now|\d+ minutes? ago) · 2 turns$/.test(o))) {
    throw new Error(`the sessions read ${JSON.stringify(options)}`);
  }
  if (options.some((o) => /\d{4}-\d\d-\d\dT\d\d/.test(o))) throw new Error(`a session shows a timestamp: ${JSON.stringify(options)}`);

  // The Versions panel; on a phone a drawer over the transcript, which keeps its width.
  const width0 = (await page.locator("#transcript").boundingBox()).width;
  await page.locator("#versions-toggle").click();
  await page.locator("#checkpoints li", { hasText: "Turn 1" }).waitFor();
  if (phone) {
    const [panel, width1] = [await page.locator("#versions").boundingBox(), (await page.locator("#transcript").boundingBox()).width];
    if (width1 !== width0) throw new Error("the versions drawer squeezed the transcript");
    if (panel.x + panel.width > viewport.width + 1 || panel.height < viewport.height - 1) throw new Error(`the drawer is ${JSON.stringify(panel)}`);
  }
  await touchTargets("versions");
  await shot("versions");
  await page.locator("#versions-close").click();
  await page.locator("#versions").waitFor({ state: "hidden" });

  // The model switched from the header: the session's status follows; then back.
  await page.locator("#model-select").selectOption("demo");
  await waitFor("the model switch", async () => (await api(`/api/sessions/${id}`)).model === "demo");
  await modelShown("demo", "demo");
  const others = await page.locator("#model-select option").evaluateAll((os) => os.map((o) => o.value));
  // A hosted model without its key set cannot be picked, and says what to export (no 502).
  const hosted = await page.locator('#model-select option[value="deepseek:deepseek-chat"]').evaluate((o) => ({ disabled: o.disabled, text: o.textContent }));
  if (!hosted.disabled || !hosted.text.includes("no API key: export DEEPSEEK_API_KEY")) {
    throw new Error(`a model without its key is offered as ${JSON.stringify(hosted)}`);
  }
  await page.locator("#model-select").selectOption(model);
  await waitFor("the model switch back", async () => (await api(`/api/sessions/${id}`)).model === model);
  await modelShown(path.basename(model.slice("script:".length)), model);
  // every model the list offers would show whole too
  for (const m of others.filter((m) => m.includes(":"))) {
    await page.evaluate(([m]) => {
      const face = document.querySelector("#model-face");
      face.dataset.was = face.textContent;
      face.textContent = m.split(":").pop().split("/").pop();
    }, [m]);
    const whole = await page.locator("#model-face").evaluate((f) => f.scrollWidth <= f.clientWidth);
    await page.locator("#model-face").evaluate((f) => (f.textContent = f.dataset.was));
    if (phone && !whole) throw new Error(`the model ${m} would not show whole on the phone`);
  }

  await context.close();
}

try {
  await day({ width: 1280, height: 800 }, "desktop");
  // the phone's session writes the same file afresh
  fs.rmSync(file("calc"), { recursive: true, force: true });
  await day({ width: 390, height: 844 }, "phone");
  run.check("both sizes");
  console.log("ux: ok");
} catch (e) {
  console.error(`ux: ${e.stack ?? e}`);
  await current?.screenshot({ path: path.join(run.shots, "ux-failed.png") }).catch(() => {});
  process.exitCode = 1;
} finally {
  await run.close();
}
