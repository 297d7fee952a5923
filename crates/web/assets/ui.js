// The page's fixed elements (index.html), looked up once.

const $ = (id) => document.getElementById(id);

export const ui = {
  select: $("session-select"),
  newSession: $("new-session"),
  versionsToggle: $("versions-toggle"),
  banner: $("banner"),
  transcript: $("transcript"),
  rows: $("rows"),
  approvals: $("approvals"),
  versions: $("versions"),
  heads: $("heads"),
  checkpoints: $("checkpoints"),
  prompt: $("prompt"),
  send: $("send"),
  cancel: $("cancel"),
  usage: $("usage"),
  composer: $("composer"),
  planMode: $("plan-mode"),
  planIndicator: $("plan-indicator"),
  compact: $("compact"),
  dialog: $("rewind-dialog"),
  dialogTitle: $("rewind-title"),
  dialogBody: $("rewind-body"),
  dialogConfirm: $("rewind-confirm"),
  dialogCancel: $("rewind-cancel"),
  dialogError: $("rewind-error"),
  dialogForm: $("rewind-form"),
};
