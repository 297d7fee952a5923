// Shell commands waiting for the user's approval (`bash = "ask"`): asked below the transcript,
// answered from any page showing the session. The snapshot lists those pending; the events add
// and resolve them.
import { call, s } from "./api.js";
import { attempt } from "./banner.js";
import { state } from "./state.js";
import { ui } from "./ui.js";
import { el, button, hasFocus } from "./util.js";

/** The question for a pending approval (`{call_id, tool, command}`): the command and three answers. */
function approvalBlock(p) {
  const a = el("div", "approval");
  a.dataset.callId = p.call_id;
  const answer = (decision) =>
    attempt(async () => {
      await call("POST", `${s(state.sid)}/approvals/${encodeURIComponent(p.call_id)}`, { decision });
    });
  a.append(
    el("div", null, `Run ${p.tool}: `, el("code", null, p.command)),
    button("Allow once", () => answer("once")),
    button("Allow for session", () => answer("session")),
    button("Deny", () => answer("deny"), "danger"),
  );
  return a;
}

function blockOf(callId) {
  return [...ui.approvals.children].find((a) => a.dataset.callId === callId);
}

/** Shows the snapshot's pending approvals, and only those. */
export function showApprovals(pending) {
  const had = hasFocus(ui.approvals) ? document.activeElement.closest(".approval")?.dataset.callId : null;
  ui.approvals.replaceChildren(...pending.map(approvalBlock));
  if (had != null) (blockOf(had)?.querySelector("button") ?? ui.prompt).focus();
}

/** An `approval_requested` event: the question is asked (once). */
export function showRequested(ev) {
  if (!blockOf(ev.call_id)) ui.approvals.append(approvalBlock(ev));
}

/** An `approval_resolved` event: the question goes (the focus goes to the composer). */
export function showResolved(ev) {
  const a = blockOf(ev.call_id);
  if (!a) return;
  const had = hasFocus(a);
  a.remove();
  if (had) ui.prompt.focus();
}
