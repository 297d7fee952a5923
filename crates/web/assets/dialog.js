// The rewind preview is a modal <dialog>: the page behind it is inert and Tab stays inside. Its
// commit button says what it will do and is enabled only when the preview says the commit can go
// ahead as chosen (a conflict choice picked, the confirmation ticked); it opens on that button when
// it is, else on the first choice, else on Cancel. Enter commits, Esc or Cancel closes it and gives
// the focus back to the action that opened it; a preview that would change nothing offers only
// Close. A failed commit
// says why inside the dialog.
import { errorText, showError } from "./banner.js";
import { returnFocus } from "./transcript.js";
import { ui } from "./ui.js";
import { focusFirst } from "./util.js";

const dialog = { opener: null, turn: null, confirm: null, committed: false, busy: false };

/**
 * Shows on the commit button what `preview` would commit now, enabled when it can; when it would
 * change nothing, the button only closes the preview ("Close") and Cancel, which would do the
 * same, is not shown.
 */
function showCommit(preview) {
  const { ready, text, close } = preview.commit();
  ui.dialogConfirm.textContent = text;
  ui.dialogConfirm.disabled = !ready;
  ui.dialogConfirm.dataset.close = close ? "true" : "";
  ui.dialogCancel.hidden = !!close;
}

/**
 * Shows `preview` (checkpoints.js `rewindPreview`: its title, body and commit), opened by `opener`
 * (a rewind action of turn `turn`, or a file's history with `turn` null); the commit button runs
 * `confirm(preview.commit())`, which calls `closeCommitted()` once its change is made. A preview
 * shown while another is open (a version restored from the history of one of its files) takes
 * its place.
 */
export function openDialog(preview, opener, turn, confirm) {
  ui.dialogTitle.textContent = preview.title;
  ui.dialogBody.replaceChildren(...preview.body);
  showCommit(preview);
  preview.onChange(() => showCommit(preview));
  Object.assign(dialog, { opener, turn, confirm: () => confirm(preview.commit()), committed: false, busy: false });
  ui.dialogError.hidden = true;
  ui.dialogError.textContent = "";
  if (!ui.dialog.open) ui.dialog.showModal();
  focusFirst(ui.dialogConfirm, ui.dialogBody.querySelector("input"), ui.dialogCancel);
}

/**
 * Closes the dialog after its change was made: what fails after this goes to the banner, and the
 * focus is left to the caller.
 */
export function closeCommitted() {
  dialog.committed = true;
  ui.dialog.close();
}

/** Whether Tab stops at radio button `r`: the checked one of its group, or its first if none is. */
function radioStop(d, r) {
  const group = [...d.querySelectorAll("input[type=radio]")].filter((x) => x.name === r.name);
  return r.checked || (!group.some((x) => x.checked) && group[0] === r);
}

/**
 * Keeps Tab inside modal dialog `d`: Tab from its last control wraps to the first and Shift+Tab
 * from the first to the last, so the focus never leaves it for the browser's own controls (a
 * radio group's stop is its checked button, or its first when none is).
 */
export function trapTab(d) {
  d.addEventListener("keydown", (e) => {
    if (e.key !== "Tab") return;
    const stops = [...d.querySelectorAll("button, input, select, textarea, a[href], [tabindex]")].filter(
      (x) => !x.disabled && x.tabIndex >= 0 && x.getClientRects().length > 0 && (x.type !== "radio" || radioStop(d, x)),
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
}

/** Listens to the dialog's form and keys (once, at start). */
export function installDialog() {
  ui.dialogForm.addEventListener("submit", (e) => {
    if (e.submitter === ui.dialogCancel) return; // method="dialog": closes it
    e.preventDefault();
    if (ui.dialogConfirm.dataset.close) return ui.dialog.close(); // nothing would change: nothing to commit
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

  trapTab(ui.dialog);

  ui.dialog.addEventListener("close", () => {
    const { opener, turn, committed } = dialog;
    Object.assign(dialog, { opener: null, turn: null, confirm: null });
    // A commit moves the focus itself once the transcript is shown again (afterRewind). This
    // event comes a task after the dialog closed, when the browser may already have given the
    // focus back (to the opener) and the user gone on from there (opened its menu again): the
    // focus moves only when it is nowhere (or still in the dialog).
    const a = document.activeElement;
    const lost = !a || a === document.body || ui.dialog.contains(a);
    if (!committed && lost) returnFocus(opener, turn);
  });
}
