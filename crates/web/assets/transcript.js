// The open session's transcript, read from the server and rendered whole; the keyboard focus
// survives the re-render.
import { call, s } from "./api.js";
import { showPlan } from "./controls.js";
import { assistantBlock, noteBlock, setToolResult, toolBlock, userBlock } from "./messages.js";
import { state } from "./state.js";
import { ui } from "./ui.js";
import { el, focusFirst, hasFocus, usageText } from "./util.js";

export function scrollDown() {
  ui.transcript.scrollTop = ui.transcript.scrollHeight;
}

/** Turn `turn`'s prompt, as the transcript shows it now. */
export function promptOf(turn) {
  return ui.transcript.querySelector(`.msg.user[data-turn="${Number(turn)}"]`);
}

/** The rewind action `label` of turn `turn`'s prompt, as the transcript shows it now. */
function rewindButton(turn, label) {
  const m = promptOf(turn);
  return m && [...m.querySelectorAll(".rewind button")].find((b) => b.dataset.action === label);
}

/**
 * Gives the keyboard focus back after an action started from `opener` (a rewind action of turn
 * `turn`): to the opener if it is still in the page, to the same action of the re-rendered prompt,
 * else to the composer.
 */
export function returnFocus(opener, turn, ...fallbacks) {
  focusFirst(opener, turn == null ? null : rewindButton(turn, opener?.dataset.action), ...fallbacks, ui.prompt);
}

export async function renderTranscript() {
  const id = state.sid;
  const [entries, status] = await Promise.all([call("GET", `${s(id)}/transcript`), call("GET", s(id))]);
  if (id !== state.sid) return;
  showPlan(!!status.plan_mode);
  const out = [];
  const tools = new Map();
  for (const e of entries) {
    if (e.role === "user") {
      out.push(userBlock(e.content, e.turn));
    } else if (e.role === "assistant") {
      const b = assistantBlock();
      b.text.textContent = e.content;
      for (const c of e.tool_calls ?? []) {
        const d = toolBlock(c);
        tools.set(c.id, d);
        b.el.append(d);
      }
      if (e.usage) b.el.append(el("div", "usage-line", usageText(e.usage)));
      out.push(b.el);
    } else if (e.role === "tool") {
      const d = tools.get(e.tool_call_id);
      // the log keeps no flag: a failed call's result is `error: …`
      if (d) setToolResult(d, !e.content.startsWith("error:"), e.content);
      else out.push(el("pre", "msg tool-orphan", e.content));
    } else {
      const d = el("details", "msg system");
      const first = e.content.split("\n", 1)[0];
      const label = first.length > 80 ? `${first.slice(0, 80)}…` : first;
      d.append(el("summary", null, `${e.role}: ${label}`), el("div", "text", e.content));
      out.push(d);
    }
  }
  if (out.length === 0) out.push(el("p", "empty", "No messages yet. Type a prompt below."));
  const note = state.notes.get(status.head_id);
  if (note) {
    const i = out.findIndex((m) => m.dataset?.turn === String(note.turn));
    out.splice(i < 0 ? out.length : i, 0, noteBlock(note.text));
  }
  // the focused prompt, rewind action or tool call, to focus its copy in the new transcript
  // (else the composer) rather than lose the focus to the page's body
  const focused = hasFocus(ui.transcript) ? document.activeElement : null;
  const turn = focused?.closest(".msg.user")?.dataset.turn;
  const callId = focused?.closest(".tool")?.dataset.callId;
  ui.transcript.replaceChildren(...out);
  if (focused) {
    let again = null;
    if (turn != null) {
      again = focused.dataset.action ? rewindButton(turn, focused.dataset.action) : promptOf(turn);
    } else if (callId != null) {
      again = [...ui.transcript.querySelectorAll(".tool")].find((d) => d.dataset.callId === callId)?.querySelector("summary");
    }
    focusFirst(again, ui.prompt);
  }
  state.live = null;
  scrollDown();
}
