// The rows of a session are the same however the page came by them, in Debian's chromium: three
// turns (reasoning and a written file; an edit and a second file; a shell command approved after
// a reload in the middle of the turn) seen live in tab A and in tab B, then compared after a
// reload, after a code rewind (one restore note more) and its undo (one more), and after the
// server restarts: both tabs say to open its new address, and opened there the session shows
// the same rows; a turn after that is seen live and again after a reload. Checkpoints keep their
// file counts throughout. Any console error or page error fails the run, but for the two requests
// each tab makes to the restarted server with the old server's key (the stream's reconnection and
// the page's reading of the session: 401, logged by the browser).
//
//   node rows.mjs URL WORKSPACE SCREENSHOT_DIR
//
// It prints `RESTART` and reads the new address from its standard input (web_cli.rs restarts the
// server on the same port).
import fs from "node:fs";
import readline from "node:readline";
import { launch } from "./launch.mjs";

const run = await launch("rows.mjs");
const { url, browser, check, file } = run;
const input = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();

/** Console lines the browser itself logs for a refused request, allowed while `expected` is set. */
let expected = null;
const allowed = [];
try {
  const context = await browser.newContext({ viewport: { width: 1000, height: 900 } });
  /** A tab named `name`; a console line `expected` takes is kept apart, not an error. */
  const open = async (name) =>
    run.watch(await context.newPage(), name, (text) => !!expected?.test(text) && !!allowed.push(`${name}: ${text}`));
  const a = await open("A");
  const shot = (page, name) => run.shot(page, `rows-${name}`, { fullPage: true });
  /** The transcript's rows: each one's classes and text. */
  const rows = (page) =>
    page.evaluate(() =>
      [...document.querySelectorAll("#rows > *")].map((r) => `${r.className} | ${r.textContent.replace(/\s+/g, " ").trim()}`),
    );
  const same = (what, got, want) => {
    if (JSON.stringify(got) !== JSON.stringify(want)) {
      throw new Error(`${what}: the rows differ\n got: ${JSON.stringify(got, null, 1)}\nwant: ${JSON.stringify(want, null, 1)}`);
    }
  };
  /** Waits until `page` shows `want`'s rows (it may still be reading the session). */
  const shows = async (what, page, want) => {
    const start = Date.now();
    for (;;) {
      const got = await rows(page);
      if (JSON.stringify(got) === JSON.stringify(want)) return;
      if (Date.now() - start > 10000) same(what, got, want);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const idle = (page) => page.locator("#send:not([disabled])").waitFor();
  const send = async (page, text, answer) => {
    await page.locator("#prompt").fill(text);
    await page.locator("#prompt").press("Enter");
    if (answer) {
      await page.locator(".msg.assistant", { hasText: answer }).waitFor();
      await idle(page);
    }
  };
  const counts = (r) => r.filter((x) => x.startsWith("msg checkpoint")).map((x) => x.split(" | ")[1]);

  await a.goto(url);
  await a.getByText(/No session yet/).waitFor();

  // Turn 0, seen live in A: reasoning, a written file with its diff, the checkpoint's count.
  await send(a, "write a", "wrote a.txt");
  const session = new URL(a.url()).searchParams.get("session");
  const address = (base) => {
    const u = new URL(base);
    u.searchParams.set("session", session);
    return u.toString();
  };
  const b = await open("B");
  await b.goto(address(url));
  await b.locator(".msg.assistant", { hasText: "wrote a.txt" }).waitFor();
  await a.locator(".msg.assistant .reasoning", { hasText: "a file of three lines" }).waitFor();
  const write = a.locator(".tool.ok", { hasText: "Created a.txt" });
  await write.locator("summary").click();
  await write.locator(".change-head", { hasText: "created a.txt (+3 −0)" }).waitFor();
  await a.locator(".msg.checkpoint", { hasText: "Checkpoint of turn 0: 1 file" }).waitFor();

  // Turn 1, live in both: an edit (a removed and an added line) and a second file.
  await send(a, "edit a, write b", "edited a.txt and wrote b.txt");
  await b.locator(".msg.assistant", { hasText: "edited a.txt and wrote b.txt" }).waitFor();
  const edit = a.locator(".tool.ok", { hasText: "Edited a.txt" });
  await edit.locator("summary").click();
  await edit.locator(".tool-diff .del", { hasText: "-2" }).waitFor();
  await edit.locator(".tool-diff .add", { hasText: "+two" }).waitFor();
  await edit.locator(".tool-diff .hunk", { hasText: "@@" }).first().waitFor();
  await a.locator(".msg.checkpoint", { hasText: "Checkpoint of turn 1: 2 files" }).waitFor();
  await shows("tab B, live", b, await rows(a));
  await shot(a, "live");

  // Turn 2 asks before running a command: A is reloaded while it waits; the question is still
  // there (from the snapshot), and answered there, the turn goes on in both tabs.
  await send(a, "run a command");
  await a.locator(".approval", { hasText: "echo c > c.txt" }).waitFor();
  await b.locator(".approval", { hasText: "echo c > c.txt" }).waitFor();
  await a.reload();
  const approval = a.locator(".approval", { hasText: "echo c > c.txt" });
  await approval.waitFor();
  await a.locator(".msg.user", { hasText: "run a command" }).waitFor();
  await approval.getByRole("button", { name: "Allow once" }).click();
  await a.locator(".msg.assistant", { hasText: "ran it" }).waitFor();
  await idle(a);
  await b.locator(".msg.assistant", { hasText: "ran it" }).waitFor();
  if (await b.locator(".approval").count()) throw new Error("tab B still asks");
  if (!fs.existsSync(file("c.txt"))) throw new Error("the approved command did not run");
  const live = await rows(a);
  await shows("tab B, after the approval", b, live);
  if (!live.some((r) => r.startsWith("msg tool ok") && r.includes("Ran echo c > c.txt"))) throw new Error(`no command row: ${JSON.stringify(live)}`);
  same("the checkpoints' counts", counts(live).map((c) => c.split(":")[1].trim().split(" ")[0]), ["1", "2", "0"]);

  // A reload shows the same rows.
  await a.reload();
  await a.locator(".msg.assistant", { hasText: "ran it" }).waitFor();
  await shows("A after a reload", a, live);
  await shot(a, "reloaded");

  // Restore code to before turn 1: the shell command's effects stay, which the user confirms; the
  // files go back, a restore note is added and nothing else changes (the checkpoints keep their
  // counts); B follows.
  const turn1 = a.locator('.msg.user[data-turn="1"]');
  await turn1.locator(".rewind .menu-toggle").click();
  await turn1.locator('.rewind button[data-action="restore_code"]').click();
  await a.locator("#rewind-dialog").getByText("b.txt").waitFor();
  await a.locator("#rewind-confirm:disabled").waitFor();
  await a.locator("#rewind-dialog .confirm-untracked input").check();
  await a.locator("#rewind-confirm").click();
  await a.locator("#banner", { hasText: "Restored code" }).waitFor();
  if (fs.existsSync(file("b.txt")) || fs.readFileSync(file("a.txt"), "utf8") !== "1\n2\n3\n") throw new Error("the files were not restored");
  await a.locator(".msg.note.restore", { hasText: "Restored a.txt, b.txt to before turn 1" }).waitFor();
  const rewound = await rows(a);
  same("the rows before the rewind's note", rewound.slice(0, live.length), live);
  if (rewound.length !== live.length + 1 || !rewound.at(-1).startsWith("msg note restore")) {
    throw new Error(`after the rewind the rows end ${JSON.stringify(rewound.slice(live.length))}`);
  }
  await shows("tab B, after the rewind", b, rewound);
  await shot(a, "rewound");

  // Undo: the files are back, one note more; after a reload, the same.
  await a.locator("#banner").getByRole("button", { name: "Undo" }).click();
  await a.locator("#banner", { hasText: "Undone" }).waitFor();
  if (!fs.existsSync(file("b.txt"))) throw new Error("the undo did not bring b.txt back");
  await a.locator(".msg.note.restore", { hasText: "Undid the restore of" }).waitFor();
  const undone = await rows(a);
  same("the rows before the undo's note", undone.slice(0, rewound.length), rewound);
  if (undone.length !== rewound.length + 1) throw new Error(`after the undo the rows end ${JSON.stringify(undone.slice(rewound.length))}`);
  await shows("tab B, after the undo", b, undone);
  await a.reload();
  await a.locator(".msg.assistant", { hasText: "ran it" }).waitFor();
  await shows("A after the undo and a reload", a, undone);
  await shot(a, "undone");

  // The server restarts (same port, same data, a new key for the page): both tabs lose the
  // stream, try again, and say to open the new address; their rows stay.
  expected = /status of 401 \(Unauthorized\)/;
  console.log("RESTART");
  const next = (await input.next()).value;
  if (!next) throw new Error("no new address after the restart");
  const refused = "The server no longer knows this page";
  await a.locator("#banner", { hasText: refused }).waitFor({ timeout: 30000 });
  await b.locator("#banner", { hasText: refused }).waitFor({ timeout: 30000 });
  same("A after the restart, before opening it again", await rows(a), undone);
  expected = null;
  await b.close();

  // Opened at the new address, the session shows the same rows; a new turn is seen live, and
  // again after a reload.
  await a.goto(address(next));
  await a.locator(".msg.assistant", { hasText: "ran it" }).waitFor();
  await shows("A after the restart", a, undone);
  await shot(a, "restarted");
  await send(a, "once more", "after the restart");
  const more = await rows(a);
  same("the rows before the new turn", more.slice(0, undone.length), undone);
  await a.reload();
  await a.locator(".msg.assistant", { hasText: "after the restart" }).waitFor();
  await shows("A after the new turn and a reload", a, more);
  check("the new turn");
  console.log(`rows flow ok: ${more.length} rows; the browser logged, as expected:\n  ${allowed.join("\n  ")}`);
} finally {
  await run.close();
}
// standard input stays open: exit rather than wait for it
process.exit(process.exitCode ?? 0);
