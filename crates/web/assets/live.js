// The session's events as they come (api.js `subscribe`): the running turn is drawn as it streams;
// whatever else changed the session reads the transcript and the panel again.
import { approvalBlock, showResolved } from "./approvals.js";
import { banner, hideBanner } from "./banner.js";
import { setRunning, showPlan } from "./controls.js";
import { assistantBlock, compactedText, noteBlock, setToolResult, toolBlock, userBlock } from "./messages.js";
import { state } from "./state.js";
import { promptOf, scrollDown } from "./transcript.js";
import { ui } from "./ui.js";
import { el, button, usageText } from "./util.js";
import { reload } from "./versions.js";

function liveBlock() {
  if (!state.live) {
    state.live = assistantBlock();
    ui.transcript.querySelector(".empty")?.remove();
    ui.transcript.append(state.live.el);
  }
  return state.live;
}

/** Shows one event of type `type`. */
export async function onEvent(type, ev) {
  switch (type) {
    case "turn_started":
      setRunning(true);
      ui.transcript.querySelector(".empty")?.remove();
      state.live = null;
      // a turn that started while the transcript was read is already shown
      if (!promptOf(ev.turn)) ui.transcript.append(userBlock(ev.prompt, ev.turn));
      liveBlock();
      break;
    case "assistant_delta": {
      const b = liveBlock();
      if (b.text.nextSibling) {
        // text after a tool call goes into a new paragraph below it
        b.text = el("div", "text");
        b.el.append(b.text);
      }
      b.text.append(ev.text);
      break;
    }
    case "reasoning_delta": {
      const b = liveBlock();
      if (!b.reasoning) {
        const d = el("details", "reasoning", el("summary", null, "reasoning"));
        b.reasoning = el("div", "text");
        d.append(b.reasoning);
        b.el.insertBefore(d, b.el.firstChild);
      }
      b.reasoning.append(ev.text);
      break;
    }
    case "tool_call": {
      const b = liveBlock();
      const d = toolBlock(ev);
      b.tools.set(ev.id, d);
      b.el.append(d);
      break;
    }
    case "tool_result": {
      const d = state.live?.tools.get(ev.id);
      if (d) setToolResult(d, ev.ok, ev.content);
      break;
    }
    case "approval_requested":
      liveBlock().el.append(approvalBlock(ev));
      break;
    case "approval_resolved":
      showResolved(ev);
      break;
    case "turn_finished":
      setRunning(false);
      if (ev.usage) ui.usage.textContent = usageText(ev.usage);
      if (!ev.ok && ev.error) banner("error", el("span", null, `Turn ${ev.turn} failed: ${ev.error}`), button("Dismiss", hideBanner));
      await reload();
      break;
    case "notice":
      ui.usage.textContent = ev.message;
      break;
    case "error":
      banner("error", el("span", null, ev.message), button("Dismiss", hideBanner));
      break;
    case "summary_started":
      setRunning(true);
      ui.usage.textContent = state.compacting ? "compacting…" : "summarizing…";
      break;
    case "summary_finished":
      setRunning(false);
      ui.usage.textContent = ev.ok
        ? state.notes.has(ev.head_id) ? "compacted" : "summary written"
        : `summary failed: ${ev.error ?? ""}`;
      await reload();
      break;
    case "compacted": {
      const text = compactedText(ev);
      state.notes.set(ev.head_id, { turn: ev.turn, text });
      if (state.live) {
        // compacted on its own during a turn: the line goes before the turn's prompt now; the
        // transcript is read again from the new head when the turn ends
        const m = promptOf(ev.turn);
        if (m) m.before(noteBlock(text));
        else ui.transcript.append(noteBlock(text));
      } else if (!state.running) {
        await reload();
      }
      break;
    }
    case "plan_mode":
      showPlan(!!ev.on);
      break;
    case "rewound":
    case "undone":
    case "head_changed":
    case "lagged":
      if (!state.running) await reload();
      break;
    default:
      break;
  }
  scrollDown();
}
