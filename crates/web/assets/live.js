// What the session's events say besides its items (view.js applies those): a turn or a summary
// running, the session's tally (the status line), notices, plan mode, approvals, failures, a
// compaction.
import { showRequested, showResolved } from "./approvals.js";
import { banner, hideBanner, say } from "./banner.js";
import { setRunning, showPlan } from "./controls.js";
import { readEntries } from "./entries.js";
import { compactedText } from "./messages.js";
import { loadSessions } from "./picker.js";
import { afterJob } from "./queue.js";
import { state } from "./state.js";
import { ui } from "./ui.js";
import { showUsage } from "./header.js";
import { el, button } from "./util.js";
import { refreshSide } from "./versions.js";

/** Shows one event of type `type`. */
export async function onEvent(type, ev) {
  switch (type) {
    case "turn_started":
      setRunning(true);
      ui.activity.textContent = "";
      await readEntries(); // the new turn's actions
      // a session's first turn names it in the picker (its first prompt), not "New session"
      if (ev.turn === 0) await loadSessions(state.sid);
      break;
    case "approval_requested":
      showRequested(ev);
      break;
    case "approval_resolved":
      showResolved(ev);
      break;
    case "turn_finished": {
      setRunning(false);
      ui.activity.textContent = "";
      // A turn the user cancelled did not fail: said as what it is, not as an error.
      if (!ev.ok && ev.error && /^cancelled\b/.test(ev.error)) banner("info", el("span", null, `Turn ${ev.turn} was cancelled; what it changed before that stays, and a rewind takes it back.`), button("Dismiss", hideBanner));
      else if (!ev.ok && ev.error) banner("error", el("span", null, `Turn ${ev.turn} failed: ${ev.error}`), button("Dismiss", hideBanner));
      const queued = afterJob(!!ev.ok); // a prompt queued meanwhile goes now (or back, when it failed)
      await readEntries(); // what the turn changed about what each turn offers
      await loadSessions(state.sid); // its first prompt, turns and last use
      await refreshSide(false);
      await queued;
      break;
    }
    case "notice":
      ui.activity.textContent = ev.message;
      break;
    case "usage":
      showUsage(ev.usage);
      break;
    case "error":
      banner("error", el("span", null, ev.message), button("Dismiss", hideBanner));
      break;
    case "summary_started":
      setRunning(true);
      ui.activity.textContent = state.compacting ? "compacting…" : "summarizing…";
      break;
    case "summary_finished":
      setRunning(false);
      ui.activity.textContent = ev.ok ? (state.compacting ? "compacted" : "summary written") : `summary failed: ${ev.error ?? ""}`;
      await afterJob(!!ev.ok);
      break;
    case "compacted":
      say(compactedText(ev));
      break;
    case "plan_mode":
      showPlan(!!ev.on);
      break;
    // shown through the items (view.js), or by reading the session again
    case "assistant_delta":
    case "reasoning_delta":
    case "item_started":
    case "item_updated":
    case "item_completed":
    case "item_removed":
    case "tool_call":
    case "tool_result":
    case "checkpoint_captured":
    case "step_finished":
    case "rewound":
    case "undone":
    case "redone":
    case "head_changed":
    case "lagged":
    default:
      break;
  }
}
