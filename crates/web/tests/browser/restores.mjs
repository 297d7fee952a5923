// What a restore looks like on the page after a new user's second trial, in Debian's chromium at
// 1280×800 (the menu also at 390×844): three turns (files written, one written again unchanged
// and one moved, an answer with fenced Python; then the notes edited), and
//
// - fenced code in syntax colours, sanitised (its parts are spans of the highlighter's classes);
// - a write that changed nothing shows its file's chip and "unchanged"; a move no "+0 −0";
// - the rewind menu shows what the highlighted item does under the list (hovered, else focused),
//   and on the phone a line under each item;
// - a code restore leaves a restore row in the user's words ("↺ Restored … to before turn 2"),
//   not the note the model was given; a preview that would change nothing (every file already
//   as it was, or its one conflicted file kept) says so at once and only closes, committing
//   nothing; file actions in the terminal UI's words ("unchanged", "keep");
// - a conflicted file's preview opens on keeping it, shows no changes for it until overwriting
//   is picked, then what overwriting does;
// - a conversation restore puts its prompt into the composer, its Undo says what it did in counts
//   and puts back what the composer held; after Undo then Redo the heads' names tell them apart.
//
// Any console or page error fails the run.
//
//   node restores.mjs URL WORKSPACE SCREENSHOT_DIR
import fs from "node:fs";
import { launch } from "./launch.mjs";

const run = await launch("restores.mjs");
const { url, browser, file } = run;
const NOTES = "# notes\n- a\n- b\n- c\n- d\n";

const same = (what, got, want) => {
  if (JSON.stringify(got) !== JSON.stringify(want)) throw new Error(`${what}:\n got: ${JSON.stringify(got)}\nwant: ${JSON.stringify(want)}`);
};

try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = run.watch(await context.newPage());
  const shot = (name) => run.shot(page, `restores-${name}`);
  const idle = () => page.locator("#send:not([disabled])").waitFor();
  const prompt = page.locator("#prompt");
  const send = async (text, answer) => {
    await prompt.fill(text);
    await prompt.press("Enter");
    await page.locator(".msg.assistant", { hasText: answer }).waitFor();
    await idle();
  };
  const sid = () => new URL(page.url()).searchParams.get("session");
  const api = (p) => page.evaluate(async (p) => (await fetch(p)).json(), p);
  const banner = page.locator("#banner");
  const dialog = page.locator("#rewind-dialog");
  const confirm = page.locator("#rewind-confirm");
  const menuOf = (turn) => page.locator(`.msg.user[data-turn="${turn}"] > .rewind`);
  const choose = async (turn, action) => {
    await menuOf(turn).locator(".menu-toggle").click();
    await menuOf(turn).locator(`button[data-action="${action}"]`).click();
  };
  /** Commits the open preview; the commit's answer. */
  const commit = async () => {
    const answered = page.waitForResponse((r) => r.url().endsWith("/rewind/commit"));
    await confirm.click();
    return (await answered).json();
  };

  await page.goto(url);
  await page.getByText(/No session yet/).waitFor();
  await send("write the notes", "wrote the notes");
  await send("tidy up", "tidied");
  await send("mark the notes reviewed", "marked");

  // (a) fenced Python in colour: the highlighter's spans, coloured unlike the code around them
  const code = page.locator(".msg.assistant .md pre code.hljs");
  await code.locator(".hljs-keyword", { hasText: "def" }).waitFor();
  const colours = await code.evaluate((c) => ({
    plain: getComputedStyle(c).color,
    keyword: getComputedStyle(c.querySelector(".hljs-keyword")).color,
    tags: [...new Set([...c.querySelectorAll("*")].map((e) => e.tagName))],
    text: c.textContent,
  }));
  if (colours.keyword === colours.plain) throw new Error(`a keyword is not coloured: ${JSON.stringify(colours)}`);
  same("the tags in highlighted code", colours.tags, ["SPAN"]);
  if (!colours.text.includes("def add(a, b):\n    return a + b")) throw new Error(`the code reads ${JSON.stringify(colours.text)}`);

  // (b) a write that changed nothing: its file's chip, and "unchanged"; (c) a move: no counts
  const wrote = page.locator(".msg.tool summary", { hasText: "Wrote demo/todo.txt" });
  await wrote.locator('.file-link.chip[data-file="demo/todo.txt"]').waitFor();
  if (!(await wrote.textContent()).includes("unchanged")) throw new Error(`the unchanged write reads ${await wrote.textContent()}`);
  const moved = page.locator(".msg.tool summary", { hasText: "Moved demo/old.txt" });
  await moved.locator('.file-link.chip[data-file="demo/archive/old.txt"]').waitFor();
  if ((await moved.textContent()).includes("+0")) throw new Error(`the move reads ${await moved.textContent()}`);
  await shot("turns");

  // (e) the menu says what the highlighted item does, under the list: the focused one, then the
  // one under the pointer
  const entries = (await api(`/api/sessions/${sid()}/checkpoints`)).entries;
  const detail = (turn, action) => entries.find((e) => e.turn === turn).actions.find((a) => a.action === action).detail;
  await menuOf(2).locator(".menu-toggle").click();
  const explain = menuOf(2).locator(".menu-explain");
  await explain.waitFor();
  same("what the first item does", await explain.textContent(), detail(2, "restore_both"));
  await page.keyboard.press("ArrowDown");
  same("what the focused item does", await explain.textContent(), detail(2, "restore_conversation"));
  await menuOf(2).locator('button[data-action="fork"]').hover();
  same("what the hovered item does", await explain.textContent(), detail(2, "fork"));
  if (await menuOf(2).locator(".detail").first().isVisible()) throw new Error("the desktop menu shows a line under each item");
  await shot("menu-explained");
  await page.keyboard.press("Escape");

  // (7) a code restore: a restore row in the user's words
  await choose(2, "restore_code");
  await dialog.locator('.plan-files tr[data-path="demo/notes.md"]').waitFor();
  const restored = await commit();
  if (!restored.undo_available) throw new Error("a restore that wrote a file offers no undo");
  await banner.filter({ hasText: "Restored code to before turn 2: 1 file written." }).waitFor();
  // it sits by the action that caused it: just under turn 2's prompt (a trial found it above the
  // composer, far from the prompt whose menu made the restore)
  {
    const row = await page.locator('.msg.user[data-turn="2"]').boundingBox();
    const box = await banner.boundingBox();
    if (!row || !box || box.y < row.y + row.height || box.y > row.y + row.height + 40) {
      throw new Error(`the banner is at ${JSON.stringify(box)}, turn 2's prompt at ${JSON.stringify(row)}`);
    }
  }
  if (fs.readFileSync(file("demo/notes.md"), "utf8") !== NOTES) throw new Error("the notes were not restored");
  const note = page.locator(".msg.note.restore").last();
  await note.filter({ hasText: "Restored demo/notes.md to before turn 2" }).waitFor();
  same("the restore row", await note.textContent(), "↺ Restored demo/notes.md to before turn 2");
  await shot("restore-row");

  // (9) again: every file in the workspace is already as it was. The preview says so at once, in the terminal
  // UI's words ("unchanged"), and offers only Close: nothing is committed.
  let commits = 0;
  page.on("request", (r) => {
    if (r.url().endsWith("/rewind/commit")) commits++;
  });
  await choose(2, "restore_code");
  await dialog.locator(".plan-files .file-action", { hasText: "unchanged" }).waitFor();
  await dialog.locator(".unchanged", { hasText: "Nothing would change: every file in the workspace is already as it was." }).waitFor();
  same("the only button of a preview that changes nothing", await confirm.textContent(), "Close");
  if (await page.locator("#rewind-cancel").isVisible()) throw new Error("a preview that changes nothing offers Cancel beside Close");
  await shot("nothing-to-restore");
  await page.keyboard.press("Enter");
  await dialog.waitFor({ state: "hidden" });
  same("commits sent for a preview that changes nothing", commits, 0);

  // (10) the notes edited by hand: the preview opens on keeping them, which changes nothing (it
  // says so, and only closes), with no changes shown for them until overwriting is picked
  fs.writeFileSync(file("demo/notes.md"), "mine\n");
  const prepared = page.waitForResponse((r) => r.url().endsWith("/rewind/prepare"));
  await choose(2, "restore_code");
  const plan = await (await prepared).json();
  same("the choice the plan opens on", plan.preselected, "skip");
  await dialog.locator(".conflicts", { hasText: "demo/notes.md" }).waitFor();
  const keep = dialog.getByLabel("Skip them (keep your changes)");
  if (!(await keep.isChecked())) throw new Error("keeping the file is not picked at first");
  await dialog.locator(".unchanged", { hasText: "Nothing would change: every file in the workspace is already as it was or kept as it is." }).waitFor();
  await page.locator("#rewind-confirm:not(:disabled)", { hasText: "Close" }).waitFor();
  const row = dialog.locator('.plan-files tr[data-path="demo/notes.md"]');
  const shown = async () => [await row.locator(".file-action").textContent(), (await row.locator(".file-diff").textContent()).trim()];
  same("the kept file's row", await shown(), ["keep", ""]);
  await shot("conflict-kept");
  await dialog.getByLabel("Overwrite them").check();
  const [action, counts] = await shown();
  if (action !== "write" || !/^\+\d+ −\d+$/.test(counts)) throw new Error(`the overwritten file's row reads ${JSON.stringify([action, counts])}`);
  await page.locator("#rewind-confirm:not(:disabled)", { hasText: "Overwrite them" }).waitFor();
  if (await dialog.locator(".unchanged").isVisible()) throw new Error("overwriting still says nothing would change");
  await row.locator(".diff-toggle").click();
  await dialog.locator('tr.plan-diff[data-diff-of="demo/notes.md"] .tool-diff').waitFor();
  await shot("conflict-overwrite");
  await keep.check();
  same("the kept file's row again", await shown(), ["keep", ""]);
  if (await dialog.locator('tr.plan-diff[data-diff-of="demo/notes.md"]').isVisible()) throw new Error("the kept file's diff still shows");
  await confirm.click();
  await dialog.waitFor({ state: "hidden" });
  same("commits sent for keeping the only file", commits, 0);
  if (fs.readFileSync(file("demo/notes.md"), "utf8") !== "mine\n") throw new Error("the kept file was written");
  // back as Retrace left it: no conflict any more
  fs.writeFileSync(file("demo/notes.md"), NOTES);

  // (11) a conversation restore with a draft in the composer: its prompt comes in; undone, the
  // draft is back, and the banner counts what the undo did
  await prompt.fill("my draft");
  await choose(1, "restore_both");
  await dialog.getByText("The conversation goes back").waitFor();
  await commit();
  await banner.filter({ hasText: "Restored code and conversation to before turn 1: 1 file written, 1 file deleted." }).waitFor();
  same("the composer after the restore", await prompt.inputValue(), "tidy up");
  if (!fs.existsSync(file("demo/old.txt")) || fs.existsSync(file("demo/archive/old.txt"))) throw new Error("the move was not taken back");
  await banner.getByRole("button", { name: "Undo" }).click();
  await banner.filter({ hasText: "Undone: the conversation is back as it was; 1 file written back, 1 file deleted." }).waitFor();
  same("the composer after the undo", await prompt.inputValue(), "my draft");
  if (fs.existsSync(file("demo/old.txt")) || !fs.existsSync(file("demo/archive/old.txt"))) throw new Error("the undo did not move the file again");
  await shot("undone");

  // (17d) redone: the prompt comes back, and no two heads share a name
  await banner.getByRole("button", { name: "Redo" }).click();
  await banner.filter({ hasText: "Redone: the conversation restored again; 1 file written, 1 file deleted." }).waitFor();
  same("the composer after the redo", await prompt.inputValue(), "tidy up");
  const heads = await api(`/api/sessions/${sid()}/heads`);
  const titles = heads.map((h) => h.title);
  if (new Set(titles).size !== titles.length) throw new Error(`two heads share a name: ${JSON.stringify(titles)}`);
  if (!titles.includes("rewind before “tidy up”") || !titles.includes("rewind before “tidy up” (2)")) throw new Error(`the heads are named ${JSON.stringify(titles)}`);
  await page.locator("#versions-toggle").click();
  await page.locator(".head-name", { hasText: "rewind before “tidy up” (2)" }).waitFor();
  const names = await page.locator(".head-name").allTextContents();
  if (new Set(names).size !== names.length) throw new Error(`the Versions panel names two heads alike: ${JSON.stringify(names)}`);
  await shot("heads");
  await page.locator("#versions-close").click();
  await prompt.fill("");
  run.check("the desktop");

  // (17e) on a phone the menu has a line under each item saying what it does
  const phone = run.watch(await (await browser.newContext({ viewport: { width: 390, height: 844 } })).newPage(), "phone");
  await phone.goto(`${url}&session=${encodeURIComponent(sid())}`);
  const last = phone.locator(".msg.user").last();
  await last.locator(".menu-toggle").click();
  const list = last.locator(".menu-list");
  await list.waitFor();
  const lines = await list.evaluate((l) =>
    [...l.querySelectorAll("button:not(:disabled)")].map((b) => {
      const d = b.querySelector(".detail");
      return { action: b.dataset.action, shown: !!d && d.getBoundingClientRect().height > 0, text: d?.textContent ?? "" };
    }),
  );
  if (lines.length === 0) throw new Error("the phone's menu offers nothing");
  for (const l of lines) {
    if (!l.shown || !l.text) throw new Error(`the phone's menu item ${l.action} says nothing under it: ${JSON.stringify(lines)}`);
  }
  if (await list.locator(".menu-explain").isVisible()) throw new Error("the phone's menu shows the desktop's explanation too");
  await run.shot(phone, "restores-phone-menu");
  console.log("restores: ok");
} finally {
  await run.close();
}
