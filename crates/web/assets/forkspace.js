// Fork into a new workspace (SPEC §5.1, an entry's `fork_workspace` action): the dialog asks for
// the new workspace's directory (new or empty; a relative one is taken from this workspace), the
// server makes it and a new session there (`POST …/fork` with `worktree`), and the new session
// opens in a new tab (this page's address with `?session=ID`). What the directory holds and what
// was left out is the server's answer; the page says it.
import { call, s } from "./api.js";
import { banner, hideBanner } from "./banner.js";
import { closeCommitted, openDialog } from "./dialog.js";
import { state } from "./state.js";
import { baseName, button, count, el } from "./util.js";
import { beforeTurn } from "./words.js";

const SAYS =
  "A new session is made in a new directory: its conversation ends just before this prompt, and its " +
  "files are this workspace's as they were when this prompt was sent — a git worktree of the " +
  "repository (detached at its HEAD, your uncommitted and untracked files carried over) when the " +
  "workspace is in one, else a copy. Ignored files are not copied. It opens in a new tab; this " +
  "session and its files stay as they are.";

/** A directory beside the workspace, named after it and the turn. */
function suggestion(turn) {
  const ws = baseName(state.status?.workspace ?? "") || "workspace";
  return `../${ws}-turn-${turn}`;
}

/** This page's address, opening session `id`. */
function pageOf(id) {
  const url = new URL(location.href);
  url.searchParams.set("session", id);
  return url.href;
}

/**
 * Asks for the directory, then forks turn `turn` into it (the action `label`, started from the
 * button `opener`) and opens the new session in a new tab.
 */
export function forkIntoWorkspace(label, turn, opener) {
  const input = el("input", "fork-dir");
  Object.assign(input, { type: "text", id: "fork-dir", name: "worktree", spellcheck: false, autocomplete: "off" });
  input.value = suggestion(turn);
  input.style.width = "100%";
  input.style.boxSizing = "border-box";
  const name = el("label", null, "New workspace directory (new or empty)");
  name.htmlFor = input.id;
  let changed = () => {};
  input.addEventListener("input", () => changed());
  const ask = {
    title: `${label} (${beforeTurn(turn)})`,
    body: [el("p", null, SAYS), name, input],
    commit: () => ({ ready: input.value.trim() !== "", text: label }),
    onChange(f) {
      changed = f;
    },
  };
  openDialog(ask, opener, turn, async () => {
    // The tab is opened now, while the click still counts as the user's (one opened after the
    // answer may be blocked), and shown the new session once it exists.
    const tab = window.open("", "_blank");
    let made;
    try {
      made = await call("POST", `${s(state.sid)}/fork`, { turn, worktree: input.value.trim() });
    } catch (e) {
      tab?.close();
      throw e;
    }
    closeCommitted();
    const href = pageOf(made.session_id);
    if (tab) tab.location.href = href;
    const skipped = made.skipped.length ? `; ${count(made.skipped.length, "path")} not copied or left as they are` : "";
    const kids = [
      el(
        "span",
        null,
        `Forked ${beforeTurn(turn)} into ${made.workspace}${made.git_worktree ? " (a git worktree)" : ""}: ` +
          `${count(made.files_restored, "file")} put back as they were${skipped}. `,
      ),
    ];
    const link = el("a", null, tab ? "The new session is open in a new tab." : "Open the new session");
    Object.assign(link, { href, target: "_blank", rel: "noopener" });
    kids.push(link, button("Dismiss", hideBanner));
    banner("info", ...kids);
  });
  input.focus();
  input.select();
}
