// The start and the end every browser test shares: its arguments (`node SCRIPT URL WORKSPACE
// SCREENSHOT_DIR`), Debian's browser launched (chromium driven by playwright-core, or firefox-esr
// by puppeteer-core over WebDriver BiDi: no browser is downloaded), each page watched for console
// and page errors, screenshots that fail the run at the first error, and the browser closed at
// the end, the run failing on any error it collected.
import fs from "node:fs";
import path from "node:path";

/**
 * Starts browser test `script` (its file's name, for the usage line): reads its arguments, makes
 * the screenshot folder and launches the browser, chromium or (`firefox`) firefox-esr with
 * `viewport` as its pages' size. The run: `{url, ws, shots, browser, errors, check, file, watch,
 * shot, close}`.
 */
export async function launch(script, { firefox = false, viewport } = {}) {
  const [url, ws, shots] = process.argv.slice(2);
  if (!url || !ws || !shots) {
    console.error(`usage: node ${script} URL WORKSPACE SCREENSHOT_DIR`);
    process.exit(2);
  }
  fs.mkdirSync(shots, { recursive: true });
  const browser = firefox
    ? await (await import("puppeteer-core")).default.launch({
        browser: "firefox",
        executablePath: process.env.FIREFOX ?? "/usr/bin/firefox-esr",
        headless: true,
        defaultViewport: viewport,
      })
    : await (await import("playwright-core")).chromium.launch({
        executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
        args: ["--no-sandbox"],
      });
  /** Every console error and page error seen so far, in order. */
  const errors = [];
  /** Fails the run when an error was seen by now, saying after `what`. */
  const check = (what) => {
    if (errors.length) throw new Error(`after ${what}: ${errors.join("; ")}`);
  };
  return {
    url,
    ws,
    shots,
    browser,
    errors,
    check,
    /** A path in the workspace. */
    file: (p) => path.join(ws, p),
    /**
     * Watches `page` (named `tag` in what it reports, where there are several): a 15 s timeout
     * for every wait, each console error, page error and server error (500, with its body)
     * collected, but for the console lines `allow` takes (those the browser logs itself for a
     * request refused on purpose). Returns it.
     */
    watch(page, tag = null, allow = () => false) {
      const where = tag ? ` (${tag})` : "";
      page.setDefaultTimeout(15000);
      page.on("console", (m) => {
        if (m.type() === "error" && !allow(m.text())) errors.push(`console${where}: ${m.text()}`);
      });
      page.on("pageerror", (e) => errors.push(`page${where}: ${e.message}`));
      // A server error (500: I/O, damage, a bug; never expected) fails the run with what the
      // server said, printed at once: a wait that times out after it would otherwise end the run
      // before the errors are shown.
      page.on("response", async (r) => {
        if (r.status() !== 500) return;
        let body = "";
        try {
          body = (await r.text()).slice(0, 600);
        } catch {}
        const said = `server${where}: ${r.status()} ${r.request().method()} ${r.url()}: ${body}`;
        console.error(said);
        errors.push(said);
      });
      return page;
    },
    /** Saves a screenshot of `page` as `name`.png in the folder (`options`: the browser's), then checks. */
    async shot(page, name, options = {}) {
      await page.screenshot({ path: path.join(shots, `${name}.png`), ...options });
      check(name);
    },
    /** Closes the browser; the run fails (exit code 1) when an error was seen. */
    async close() {
      await browser.close();
      if (errors.length) {
        console.error(errors.join("\n"));
        process.exitCode = 1;
      }
    },
  };
}
