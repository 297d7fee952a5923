// The rewind preview is a modal <dialog>: the page behind it is inert and Tab stays inside. It opens
// on Confirm (Cancel when nothing can be restored); Enter confirms, Esc or Cancel closes it and
// gives the focus back to the action that opened it, whose menu stays shown meanwhile. A failed
// commit says why inside the dialog.
import { errorText, showError } from "./banner.js";
import { returnFocus } from "./transcript.js";
import { ui } from "./ui.js";
import { focusFirst } from "./util.js";

const dialog = { opener: null, turn: null, confirm: null, committed: false, busy: false };

/**
 * Shows the dialog with `title` and `body`, opened by `opener` (a rewind action of turn `turn`);
 * Confirm runs `confirm()`, which calls `closeCommitted()` once its change is made.
 */
export function openDialog(title, body, blocked, opener, turn, confirm) {
  ui.dialogTitle.textContent = title;
  ui.dialogBody.replaceChildren(...body);
  ui.dialogConfirm.disabled = blocked;
  Object.assign(dialog, { opener, turn, confirm, committed: false, busy: false });
  opener?.closest(".msg.user")?.classList.add("menu-open");
  ui.dialogError.hidden = true;
  ui.dialogError.textContent = "";
  ui.dialog.showModal();
  focusFirst(ui.dialogConfirm, ui.dialogCancel);
}

/**
 * Closes the dialog after its change was made: what fails after this goes to the banner, and the
 * focus is left to the caller.
 */
export function closeCommitted() {
  dialog.committed = true;
  ui.dialog.close();
}

/** Listens to the dialog's form and keys (once, at start). */
export function installDialog() {
  ui.dialogForm.addEventListener("submit", (e) => {
    if (e.submitter === ui.dialogCancel) return; // method="dialog": closes it
    e.preventDefault();
    if (ui.dialogConfirm.disabled || dialog.busy || !dialog.confirm) return;
    dialog.busy = true;
    dialog.confirm().catch((err) => {
      if (dialog.committed) {
        showError(err);
        return;
      }
      ui.dialogError.textContent = errorText(err);
      ui.dialogError.hidden = false;
      focusFirst(ui.dialogConfirm, ui.dialogCancel);
    }).finally(() => {
      dialog.busy = false;
    });
  });

  // Tab from the last control wraps to the first and Shift+Tab from the first to the last, so the
  // focus never leaves the dialog for the browser's own controls (a radio group's stop is its
  // checked button).
  ui.dialog.addEventListener("keydown", (e) => {
    if (e.key !== "Tab") return;
    const stops = [...ui.dialog.querySelectorAll("button, input, select, textarea, a[href], [tabindex]")].filter(
      (x) => !x.disabled && x.tabIndex >= 0 && x.getClientRects().length > 0 && !(x.type === "radio" && !x.checked),
    );
    if (stops.length === 0) return;
    const [first, last] = [stops[0], stops[stops.length - 1]];
    if (!e.shiftKey && document.activeElement === last) {
      e.preventDefault();
      first.focus();
    } else if (e.shiftKey && document.activeElement === first) {
      e.preventDefault();
      last.focus();
    }
  });

  ui.dialog.addEventListener("close", () => {
    const { opener, turn, committed } = dialog;
    Object.assign(dialog, { opener: null, turn: null, confirm: null });
    // a commit moves the focus itself once the transcript is shown again (afterRewind)
    if (!committed) returnFocus(opener, turn);
    opener?.closest(".msg.user")?.classList.remove("menu-open");
  });
}
