// Shell commands and MCP tool calls waiting for the user's approval (`bash = "ask"`, `mcp = "ask"`): asked below the transcript,
// answered from any page showing the session. The snapshot lists those pending; the events add
// and resolve them.
import { call, s } from "./api.js";
import { attempt } from "./banner.js";
import { state } from "./state.js";
import { ui } from "./ui.js";
import { el, button, hasFocus, visible } from "./util.js";

/**
 * The question for a pending approval (`{call_id, tool, command, note?, prefixes?}`): the command,
 * what running it means for rewinds (`note`, worded by the controller), and the answers: once, this
 * exact command for the session, each offered prefix for the session, deny.
 */
function approvalBlock(p) {
  const a = el("div", "approval");
  a.dataset.callId = p.call_id;
  const answer = (decision, prefix) =>
    attempt(async () => {
      const body = prefix == null ? { decision } : { decision, prefix };
      await call("POST", `${s(state.sid)}/approvals/${encodeURIComponent(p.call_id)}`, body);
    });
  // What came from the model or a server is shown escaped: a bidi override must not reorder the
  // line the user approves.
  const name = visible(p.tool);
  a.append(el("div", null, `Run ${name}: `, el("code", null, visible(p.command))));
  if (p.note) a.append(el("div", "approval-note", `⚠ ${p.note}`));
  const prefixes = p.prefixes ?? [];
  // An MCP tool (SPEC §8.1) is allowed for the session whole, whatever its arguments; a request
  // for an MCP server's resources only as it is.
  const tool = String(p.tool).startsWith("mcp__");
  const resources = p.tool === "read_mcp_resource" || p.tool === "list_mcp_resources";
  a.append(
    el(
      "div",
      "approval-scope",
      tool
        ? `"For the session" allows every call of ${name}, with any input, while this session is open; no other tool.`
        : resources
          ? `"For the session" allows this exact request again, no other.`
          : prefixes.length > 0
            ? `"For the session": this exact command again, or any simple command starting with "${visible(prefixes[0])}" (never one that chains, pipes or redirects).`
            : `"For the session" allows this exact command again, no other.`,
    ),
  );
  a.append(
    button("Allow once", () => answer("once")),
    button(
      tool ? "Allow this tool for the session" : resources ? "Allow this request for the session" : "Allow this command for the session",
      () => answer("session"),
    ),
  );
  for (const prefix of prefixes.slice(0, 1)) {
    const b = button("", () => answer("session", prefix));
    b.append("Allow ", el("code", null, `${visible(prefix)} …`), " for the session");
    a.append(b);
  }
  a.append(button("Deny", () => answer("deny"), "danger"));
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
