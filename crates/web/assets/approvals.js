// A shell command waiting for the user's approval (`bash = "ask"`): asked inline in the running
// turn, answered from any page showing the session.
import { call, s } from "./api.js";
import { attempt } from "./banner.js";
import { state } from "./state.js";
import { ui } from "./ui.js";
import { el, button, hasFocus } from "./util.js";

/** The question for an `approval_requested` event: the command and three answers. */
export function approvalBlock(ev) {
  const a = el("div", "approval");
  a.dataset.callId = ev.call_id;
  a.dataset.command = ev.command;
  const answer = (decision) =>
    attempt(async () => {
      await call("POST", `${s(state.sid)}/approvals/${encodeURIComponent(ev.call_id)}`, { decision });
    });
  a.append(
    el("div", null, `Run ${ev.tool}: `, el("code", null, ev.command)),
    button("Allow once", () => answer("once")),
    button("Allow for session", () => answer("session")),
    button("Deny", () => answer("deny"), "danger"),
  );
  return a;
}

/** An `approval_resolved` event: the question becomes its answer (the focus goes to the composer). */
export function showResolved(ev) {
  for (const a of ui.transcript.querySelectorAll(".approval")) {
    if (a.dataset.callId === ev.call_id) {
      const had = hasFocus(a);
      a.replaceChildren(el("span", null, `${a.dataset.command} — ${ev.decision}`));
      if (had) ui.prompt.focus();
      a.classList.add("resolved");
    }
  }
}
