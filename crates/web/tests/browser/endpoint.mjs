// A model with an endpoint of its own, in Debian's chromium at 1280×800: its status labels it
// "openai:local-model at URL" and names it beside as the offered list does (`model_spec`); the
// header's select shows the label once, on the listed model (not the model twice), the phone's
// face and the status line name it short, and no module of the page cuts " at URL" off a label.
// The endpoint model is faked in the server's answers (the script model answers the turn).
// Any console or page error fails the run.
//
//   node endpoint.mjs URL WORKSPACE SCREENSHOT_DIR
import { launch } from "./launch.mjs";

const run = await launch("endpoint.mjs");
const { url, browser } = run;

const same = (what, got, want) => {
  if (JSON.stringify(got) !== JSON.stringify(want)) throw new Error(`${what}:\n got: ${JSON.stringify(got)}\nwant: ${JSON.stringify(want)}`);
};
const SPEC = "openai:local-model";
const LABEL = `${SPEC} at http://127.0.0.1:9/v1`;

try {
  const page = run.watch(await browser.newPage({ viewport: { width: 1280, height: 800 } }));
  await page.goto(url);
  await page.getByText(/No session yet/).waitFor();
  await page.locator("#prompt").fill("hello");
  await page.locator("#prompt").press("Enter");
  await page.locator(".msg.assistant", { hasText: "hi" }).waitFor();
  await page.locator("#send:not([disabled])").waitFor();

  // from here the server answers as for a model with an endpoint of its own
  await page.route("**/api/models", (route) =>
    route.fulfill({
      json: { default: SPEC, models: [SPEC, "demo"], offered: [{ model: SPEC, ready: true }, { model: "demo", ready: true }] },
    }),
  );
  const patch = (status) => Object.assign(status, { model: LABEL, model_spec: SPEC });
  await page.route(
    (u) => /^\/api\/sessions\/[^/]+$/.test(u.pathname),
    async (route) => {
      if (route.request().method() !== "GET") return route.continue();
      const response = await route.fetch();
      const json = await response.json();
      patch(json.status ?? json);
      await route.fulfill({ response, json });
    },
  );
  await page.reload();
  await page.locator(".msg.assistant", { hasText: "hi" }).waitFor();
  await page.waitForFunction((spec) => document.querySelector("#model-select").value === spec, SPEC);
  const options = await page.locator("#model-select option").evaluateAll((os) => os.map((o) => [o.value, o.textContent]));
  same("the model select's options", options, [[SPEC, LABEL], ["demo", "demo"]]);
  same("the select's title", await page.locator("#model-select").getAttribute("title"), `Model: ${LABEL}`);
  same("the phone's face", await page.locator("#model-face").textContent(), "local-model");
  const line = await page.locator("#usage").textContent();
  // the status line names it by its spec, as the terminal UI's does (never the endpoint)
  if (!line.startsWith(`${SPEC} · `) && line !== SPEC) throw new Error(`the status line reads ${JSON.stringify(line)}`);

  // no module reads a model's label apart
  for (const m of ["header.js", "live.js", "view.js", "composer.js"]) {
    const text = await page.evaluate(async (m) => (await fetch(`/assets/${m}`)).text(), m);
    if (text.includes('" at "')) throw new Error(`${m} cuts " at " off a model's label`);
  }
  await run.shot(page, "endpoint-model");
  console.log("endpoint model ok");
} finally {
  await run.close();
}
