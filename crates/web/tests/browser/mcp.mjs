// The web UI with an MCP server (SPEC §8.1), in Debian's chromium: a turn calls the reference
// everything server's `echo` (`[permissions] mcp = "ask"`), the page asks as it asks for a shell
// command, saying the tool is allowed for the session whole; allowed, the tool's result shows and
// a second call of it is not asked about; the header shows the session's servers (`MCP 1/1`, its
// title listing the tools with the read-only ones marked). One screenshot, `mcp.png`; any console
// or page error fails the run.
//
//   node mcp.mjs URL WORKSPACE SCREENSHOT_DIR
import { launch } from "./launch.mjs";

const run = await launch("mcp.mjs");
const { url, browser } = run;
try {
  const page = run.watch(await browser.newPage({ viewport: { width: 1100, height: 760 } }));
  await page.goto(url);
  await page.getByText(/No session yet/).waitFor();
  const prompt = page.locator("#prompt");
  await prompt.fill("echo twice");
  await prompt.press("Enter");
  const approval = page.locator(".approval", { hasText: "mcp__everything__echo" });
  await approval.waitFor();
  await approval.getByText(/allows every call of mcp__everything__echo/).waitFor();
  await approval.getByRole("button", { name: "Allow this tool for the session" }).click();
  await page.locator(".msg.assistant", { hasText: "echoed" }).waitFor();
  await page.locator("#send:not([disabled])").waitFor();
  if (await page.locator(".approval").count()) throw new Error("the second call was asked about again");
  const mcp = page.locator("#mcp");
  await mcp.getByText("MCP 1/1").waitFor();
  const title = await mcp.getAttribute("title");
  if (!title?.includes("everything: ready") || !title.includes("mcp__everything__echo (read-only)")) {
    throw new Error(`the header's MCP title is ${JSON.stringify(title)}`);
  }
  await run.shot(page, "mcp");
  console.log("mcp flow ok");
} finally {
  await run.close();
}
