// The header's row: the model (a select of the models one can choose, `GET /api/models`; a choice
// switches the open session's model, `POST …/{id}/model`), the workspace and its git branch (the
// session's status, or the server's workspace before any session); and the status line under the
// prompt, as the terminal UI's: the model · context · tokens · cost, the session's tally in the
// controller's words (its snapshot's `usage`, then each `usage` event's). On a phone the closed select
// shows the model's short name on a face of its own (style.css), whole; its title and its opened
// list name each model in full.
import { call, s } from "./api.js";
import { attempt } from "./banner.js";
import { state } from "./state.js";
import { ui } from "./ui.js";
import { baseName, el } from "./util.js";

/** Starts a session with a model, `(model) => Promise`, set once by app.js (sessions.js). */
let startWith = async () => {};

export function setStartWith(f) {
  startWith = f;
}

/** The models offered (`GET /api/models`), read once. */
let choices = { default: null, models: [], offered: [] };

/**
 * Reads the models to offer and the server's workspace (before any session), and shows them; the
 * workspace's answer (`GET /api/workspace`: with the session to open first, if any).
 */
export async function loadHeader() {
  const [models, ws] = await Promise.all([call("GET", "/api/models"), call("GET", "/api/workspace")]);
  choices = models;
  if (!state.status) state.status = { model: models.default, workspace: ws.workspace, branch: ws.branch };
  showStatus(state.status);
  return ws;
}

/** Shows a session's status in the header: its model selected, its workspace and branch. */
export function showStatus(status) {
  state.status = status;
  // the model's label (with its endpoint: "openai:m at URL") and the same model as the list
  // names it ("openai:m"): the status carries both
  const current = status?.model ?? null;
  const bare = current ? status?.model_spec ?? current : null;
  const models = [...choices.models];
  if (bare && !models.includes(bare)) models.unshift(bare);
  // a model that cannot answer here (no API key) is shown so, and cannot be picked
  const offer = new Map((choices.offered ?? []).map((o) => [o.model, o]));
  ui.model.replaceChildren(
    ...(current ? [] : [option("", "no model")]),
    ...models.map((m) => {
      const o = option(m, m === bare ? current : m);
      const lacks = offer.get(m);
      if (lacks && !lacks.ready) {
        o.textContent += ` (${lacks.note ?? "cannot answer here"})`;
        if (m !== bare) o.disabled = true;
      }
      return o;
    }),
  );
  ui.model.value = bare ?? "";
  ui.model.title = current ? `Model: ${current}` : "No model is set up";
  showFace();
  const ws = status?.workspace ?? "";
  ui.workspace.textContent = baseName(ws);
  ui.workspace.title = ws;
  ui.branch.textContent = status?.branch ?? "";
  ui.branch.hidden = !status?.branch;
  ui.branch.title = status?.branch ? `git branch ${status.branch}` : "";
  showLine();
}

/**
 * Shows the session's tally (`usage`, a snapshot's or a `usage` event's; null: none yet) on the
 * status line.
 */
export function showUsage(usage) {
  state.usage = usage ?? null;
  showLine();
}

/** A phone's width (style.css's breakpoint): the status line names the model short there. */
const phone = typeof window.matchMedia === "function" ? window.matchMedia("(max-width: 700px)") : null;
phone?.addEventListener?.("change", () => showLine());

/**
 * The status line: the model as the terminal UI's line names it (its spec, without the endpoint;
 * on a phone by its short name, the title naming it in full), then the tally's words
 * ("21% context", "1.2k in 300 out", "$0.0018").
 */
function showLine() {
  const status = state.status;
  const spec = status?.model_spec ?? status?.model;
  const model = status?.model ? (phone?.matches ? shortModel(spec) : spec) : null;
  const said = state.usage?.says ?? [];
  ui.usage.textContent = model || said.length ? [model ?? "no model", ...said].join(" · ") : "";
  ui.usage.title = status?.model ? [`Model: ${status.model}`, ...said].join(" · ") : "";
}

/** What follows a tool's name, as every frontend says it (`McpToolInfo::mark`). */
function toolMark(t) {
  if (t.left_out) return ` (left out: ${t.left_out})`;
  if (t.vouched_read_only) return " (read-only)";
  if (t.read_only) return " (read-only by the server's word, not vouched for)";
  return "";
}

/**
 * Shows the session's MCP servers (`GET …/{id}/mcp`, SPEC §8.1) in the header: how many are
 * ready, and in its title each server's status (or why it failed), its tools (those left out and the
 * read-only ones marked) and prompts; hidden when none is configured.
 */
export function showMcp(servers) {
  const list = Array.isArray(servers) ? servers : [];
  ui.mcp.hidden = list.length === 0;
  if (!list.length) return;
  const ready = list.filter((x) => x.status === "ready").length;
  const failed = list.some((x) => x.status === "failed");
  ui.mcp.textContent = `MCP ${ready}/${list.length}`;
  ui.mcp.classList.toggle("failed", failed);
  ui.mcp.title = list
    .map((x) => {
      const head = `${x.server}: ${x.status}${x.error ? ` — ${x.error}` : ""}`;
      const tools = (x.tools ?? []).map((t) => `  mcp__${x.server}__${t.name}${toolMark(t)}`);
      const prompts = (x.prompts ?? []).map((p) => `  prompt ${p.name}`);
      return [head, ...tools, ...prompts].join("\n");
    })
    .join("\n");
}

/** Reads the open session's MCP servers and shows them (a failure leaves the header as it is). */
export async function loadMcp(id) {
  try {
    const servers = await call("GET", `${s(id)}/mcp`);
    if (id === state.sid) showMcp(servers);
  } catch {
    // The header shows nothing of them: a tool call says what is wrong.
  }
}

/**
 * A model (as the offered list names it) as the phone's header names it, short: without its
 * provider ("deepseek:deepseek-chat" → "deepseek-chat") or a script's folder ("script:/tmp/s.json"
 * → "s.json"); "demo" as it is.
 */
export function shortModel(spec) {
  const m = String(spec ?? "");
  const colon = m.indexOf(":");
  if (colon < 0) return m;
  const name = m.slice(colon + 1);
  return m.startsWith("script:") ? baseName(name) : name;
}

/** The select's face (on a phone): the model chosen, by its short name. */
function showFace() {
  ui.modelFace.textContent = ui.model.value ? shortModel(ui.model.value) : "no model";
}

function option(value, text) {
  const o = el("option", null, text);
  o.value = value;
  return o;
}

/** Switches the open session to `model` (or starts a session with it); the select follows. */
async function choose(model) {
  const before = state.status?.model ? state.status.model_spec ?? state.status.model : "";
  try {
    if (state.held) throw new Error("This session is open in another Retrace: its model cannot be changed here.");
    if (!state.sid) return await startWith(model);
    showStatus({ ...state.status, ...(await call("POST", `${s(state.sid)}/model`, { model })) });
  } catch (e) {
    ui.model.value = before;
    showFace();
    throw e;
  }
}

/** Listens to the model select (once, at start). */
export function installHeader() {
  ui.model.addEventListener("change", () => {
    showFace();
    attempt(() => choose(ui.model.value));
  });
}
