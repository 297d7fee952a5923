// The transcript's blocks: a prompt with its rewind actions, an assistant message, a tool call
// with its change and output, a note. Everything from the workspace or the model goes in with
// `textContent` (via `el`), never as HTML.
import { attempt } from "./banner.js";
import { toolChange, toolLabel } from "./tool_args.js";
import { el, button, fmtTokens } from "./util.js";

/** The actions on a prompt, `[label, (turn, button) => Promise]`, set once by app.js. */
let turnActions = [];

export function setTurnActions(actions) {
  turnActions = actions;
}

/** The change a tool call makes, as a diff (edits) or the new content (a written file). */
function toolDiff(name, args) {
  const lines = toolChange(name, args);
  if (!lines) return null;
  const pre = el("pre", "tool-diff");
  for (const [tag, text] of lines) {
    const cls = tag === "+" ? "add" : tag === "-" ? "del" : null;
    pre.append(el("span", cls, `${tag} ${text}\n`));
  }
  return pre;
}

export function toolBlock(call) {
  const d = el("details", "tool");
  d.dataset.callId = call.id;
  const status = el("span", "tool-status", "…");
  d.append(el("summary", null, status, " ", el("code", null, toolLabel(call.name, call.arguments))));
  const diff = toolDiff(call.name, call.arguments);
  if (diff) d.append(el("div", "tool-label", "change"), diff);
  d.append(el("div", "tool-label", "arguments"), el("pre", "tool-args", call.arguments));
  return d;
}

export function setToolResult(d, ok, content) {
  d.querySelector(".tool-status").textContent = ok ? "✓" : "✗";
  d.classList.toggle("failed", !ok);
  d.append(el("div", "tool-label", "output"), el("pre", "tool-out", content));
}

// A prompt's rewind actions show on hover and while the prompt has keyboard focus: Tab onto the
// prompt, Enter (or Tab) into its actions, arrows between them, Esc back to the prompt.
export function userBlock(content, turn) {
  const m = el("article", "msg user");
  m.append(el("div", "text", content));
  if (turn != null) {
    m.dataset.turn = String(turn);
    m.tabIndex = 0;
    m.setAttribute("aria-label", `Turn ${turn}: ${content.slice(0, 80)}`);
    const menu = el("div", "rewind");
    menu.setAttribute("role", "group");
    menu.setAttribute("aria-label", `Rewind to turn ${turn}`);
    for (const [label, f] of turnActions) {
      const b = button(label, () => attempt(() => f(turn, b)));
      b.dataset.action = label;
      menu.append(b);
    }
    m.append(menu);
    m.addEventListener("keydown", (e) => {
      const buttons = [...menu.querySelectorAll("button")];
      const i = buttons.indexOf(document.activeElement);
      if (e.target === m && (e.key === "Enter" || e.key === " ")) {
        e.preventDefault();
        buttons[0].focus();
      } else if (i >= 0 && ["ArrowRight", "ArrowDown", "ArrowLeft", "ArrowUp", "Home", "End"].includes(e.key)) {
        e.preventDefault();
        const n = buttons.length;
        const j = { ArrowRight: i + 1, ArrowDown: i + 1, ArrowLeft: i - 1, ArrowUp: i - 1, Home: 0, End: n - 1 }[e.key];
        buttons[(j + n) % n].focus();
      } else if (i >= 0 && e.key === "Escape") {
        e.preventDefault();
        m.focus();
      }
    });
  }
  return m;
}

/** An assistant message: `{el, text, reasoning, tools}`, filled in as its parts arrive. */
export function assistantBlock() {
  const m = el("article", "msg assistant");
  const text = el("div", "text");
  m.append(text);
  return { el: m, text, reasoning: null, tools: new Map() };
}

export function noteBlock(text) {
  const n = el("div", "msg note", text);
  n.setAttribute("role", "note");
  return n;
}

/** The note a compaction leaves in the transcript (the `compacted` event). */
export function compactedText(ev) {
  return `${ev.automatic ? "Compacted automatically (the conversation was near the model's context limit)" : "Compacted"}: ` +
    `about ${fmtTokens(ev.before_tokens)} → ${fmtTokens(ev.after_tokens)} tokens. The full conversation stays in Versions.`;
}
