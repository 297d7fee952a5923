// Retrace web UI (SPEC §9.2): a session's transcript with live updates, hover rewind, versions.
// Everything from the workspace or the model is put in the page with `textContent`, never as HTML.
import { call, s, ApiError } from "./api.js";

const $ = (id) => document.getElementById(id);
const ui = {
  select: $("session-select"),
  newSession: $("new-session"),
  versionsToggle: $("versions-toggle"),
  banner: $("banner"),
  transcript: $("transcript"),
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

const state = {
  sid: null,
  events: null,
  lastSeq: null,
  running: false,
  live: null, // the assistant block of the running turn: {el, text, reasoning, tools}
  compacting: false, // this page asked for a compaction that has not answered yet
  plan: false,
  notes: new Map(), // head id → {turn, text}: the compaction line shown on that head
};

/** An element with a class and text (or children). */
function el(tag, cls, ...kids) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  for (const k of kids) {
    if (k == null) continue;
    e.append(typeof k === "string" ? document.createTextNode(k) : k);
  }
  return e;
}

function button(label, onClick, cls) {
  const b = el("button", cls, label);
  b.type = "button";
  b.addEventListener("click", onClick);
  return b;
}

/** Whether keyboard focus is inside `e` (or on it). */
function hasFocus(e) {
  return e.contains(document.activeElement);
}

/** Focuses the first of `candidates` that is in the page and takes focus; false if none did. */
function focusFirst(...candidates) {
  for (const c of candidates) {
    if (!c || !c.isConnected) continue;
    // a prompt's rewind actions are hidden until it has the focus: shown while focusing one
    const m = c.closest(".msg.user");
    const show = m && !m.classList.contains("menu-open");
    if (show) m.classList.add("menu-open");
    c.focus();
    if (show) m.classList.remove("menu-open");
    if (document.activeElement === c) return true;
  }
  return false;
}

// A banner replaced or hidden under the keyboard focus hands it on (its new first button, or the
// composer), rather than dropping it on the page's body.
function banner(kind, ...kids) {
  const had = hasFocus(ui.banner);
  ui.banner.className = `banner ${kind}`;
  ui.banner.replaceChildren(...kids);
  ui.banner.hidden = false;
  if (had) focusFirst(ui.banner.querySelector("button"), ui.prompt);
}

function hideBanner() {
  const had = hasFocus(ui.banner);
  ui.banner.hidden = true;
  ui.banner.replaceChildren();
  if (had) ui.prompt.focus();
}

function showError(e) {
  const msg = e instanceof ApiError ? `${e.code}: ${e.message}` : String(e?.message ?? e);
  banner("error", el("span", null, msg), button("Dismiss", hideBanner));
}

/** Runs an action, showing its failure in the banner. */
async function attempt(f) {
  try {
    return await f();
  } catch (e) {
    showError(e);
    return undefined;
  }
}

function scrollDown() {
  ui.transcript.scrollTop = ui.transcript.scrollHeight;
}

// ---- sessions ----

async function loadSessions(selected) {
  const list = await call("GET", "/api/sessions");
  ui.select.replaceChildren(
    ...list.map((e) => {
      const o = el("option", null, `${e.created_at ?? e.id} · ${e.turns} turns`);
      o.value = e.id;
      return o;
    }),
  );
  if (selected && !list.some((e) => e.id === selected)) {
    const o = el("option", null, selected);
    o.value = selected;
    ui.select.prepend(o);
  }
  return list;
}

async function openSession(id) {
  state.sid = id;
  if (state.events) state.events.close();
  state.events = null;
  state.live = null;
  state.notes = new Map();
  ui.usage.textContent = "";
  hideBanner();
  ui.select.value = id;
  const url = new URL(location.href);
  url.searchParams.set("session", id);
  history.replaceState(null, "", url);
  const status = await call("GET", s(id));
  state.lastSeq = status.last_event_seq;
  setRunning(!!status.running);
  showPlan(!!status.plan_mode);
  await renderTranscript();
  connectEvents();
  if (!ui.versions.hidden) await renderVersions();
}

async function newSession(focus = true) {
  const { session_id } = await call("POST", "/api/sessions", {});
  await loadSessions(session_id);
  await openSession(session_id);
  if (focus) ui.prompt.focus();
}

// ---- transcript ----

/** The one-line label of a tool call: its name and its path or command. */
function toolLabel(name, args) {
  let a = null;
  try {
    a = JSON.parse(args);
  } catch {
    /* arguments are shown raw */
  }
  const what = a && (a.path ?? a.command ?? a.pattern ?? "");
  return what ? `${name} ${what}` : name;
}

/** A line diff of `a` → `b` (longest common subsequence; small inputs only): [tag, line] pairs. */
function lineDiff(a, b) {
  // A final line break ends the last line; it is not one more empty line.
  const x = a.replace(/\n$/, "").split("\n");
  const y = b.replace(/\n$/, "").split("\n");
  if (x.length * y.length > 250000) return null;
  const n = x.length;
  const m = y.length;
  const lcs = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i][j] = x[i] === y[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  const out = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && x[i] === y[j]) {
      out.push([" ", x[i++]]);
      j++;
    } else if (i < n && (j === m || lcs[i + 1][j] >= lcs[i][j + 1])) {
      out.push(["-", x[i++]]);
    } else {
      out.push(["+", y[j++]]);
    }
  }
  return out;
}

/** The change a tool call makes, as a diff (edits) or the new content (a written file). */
function toolDiff(name, args) {
  let a = null;
  try {
    a = JSON.parse(args);
  } catch {
    return null;
  }
  if (!a || typeof a !== "object") return null;
  const edits =
    name === "edit_file" ? [a] : name === "multi_edit" && Array.isArray(a.edits) ? a.edits : null;
  let lines = [];
  if (edits) {
    for (const e of edits) {
      if (typeof e?.old_string !== "string" || typeof e?.new_string !== "string") continue;
      const d = lineDiff(e.old_string, e.new_string);
      if (!d) return null;
      lines = lines.concat(d);
    }
  } else if (name === "write_file" && typeof a.content === "string") {
    lines = a.content.replace(/\n$/, "").split("\n").map((l) => ["+", l]);
  }
  if (!lines.length) return null;
  const pre = el("pre", "tool-diff");
  for (const [tag, text] of lines) {
    const cls = tag === "+" ? "add" : tag === "-" ? "del" : null;
    pre.append(el("span", cls, `${tag} ${text}\n`));
  }
  return pre;
}

function toolBlock(call) {
  const d = el("details", "tool");
  d.dataset.callId = call.id;
  const status = el("span", "tool-status", "…");
  d.append(el("summary", null, status, " ", el("code", null, toolLabel(call.name, call.arguments))));
  const diff = toolDiff(call.name, call.arguments);
  if (diff) d.append(el("div", "tool-label", "change"), diff);
  d.append(el("div", "tool-label", "arguments"), el("pre", "tool-args", call.arguments));
  return d;
}

function setToolResult(d, ok, content) {
  d.querySelector(".tool-status").textContent = ok ? "✓" : "✗";
  d.classList.toggle("failed", !ok);
  d.append(el("div", "tool-label", "output"), el("pre", "tool-out", content));
}

const REWIND_ACTIONS = [
  ["Restore code", (t, b) => rewind(t, "code", b)],
  ["Restore conversation", (t, b) => rewind(t, "conversation", b)],
  ["Restore both", (t, b) => rewind(t, "both", b)],
  ["Fork from here", (t, b) => fork(t, b)],
  ["Summarize from here", (t, b) => summarize(t, "from", b)],
  ["Summarize up to here", (t, b) => summarize(t, "up_to", b)],
];

// A prompt's rewind actions show on hover and while the prompt has keyboard focus: Tab onto the
// prompt, Enter (or Tab) into its actions, arrows between them, Esc back to the prompt.
function userBlock(content, turn) {
  const m = el("article", "msg user");
  m.append(el("div", "text", content));
  if (turn != null) {
    m.dataset.turn = String(turn);
    m.tabIndex = 0;
    m.setAttribute("aria-label", `Turn ${turn}: ${content.slice(0, 80)}`);
    const menu = el("div", "rewind");
    menu.setAttribute("role", "group");
    menu.setAttribute("aria-label", `Rewind to turn ${turn}`);
    for (const [label, f] of REWIND_ACTIONS) {
      const b = button(label, () => attempt(() => f(turn, b)));
      b.dataset.action = label;
      menu.append(b);
    }
    m.append(menu);
    m.addEventListener("keydown", (e) => {
      const buttons = [...menu.querySelectorAll("button")];
      const i = buttons.indexOf(document.activeElement);
      if (e.target === m && (e.key === "Enter" || e.key === " ")) {
        e.preventDefault();
        buttons[0].focus();
      } else if (i >= 0 && ["ArrowRight", "ArrowDown", "ArrowLeft", "ArrowUp", "Home", "End"].includes(e.key)) {
        e.preventDefault();
        const n = buttons.length;
        const j = { ArrowRight: i + 1, ArrowDown: i + 1, ArrowLeft: i - 1, ArrowUp: i - 1, Home: 0, End: n - 1 }[e.key];
        buttons[(j + n) % n].focus();
      } else if (i >= 0 && e.key === "Escape") {
        e.preventDefault();
        m.focus();
      }
    });
  }
  return m;
}

/** The rewind action `label` of turn `turn`'s prompt, as the transcript shows it now. */
function rewindButton(turn, label) {
  const m = ui.transcript.querySelector(`.msg.user[data-turn="${Number(turn)}"]`);
  return m && [...m.querySelectorAll(".rewind button")].find((b) => b.dataset.action === label);
}

/**
 * Gives the keyboard focus back after an action started from `opener` (a rewind action of turn
 * `turn`): to the opener if it is still in the page, to the same action of the re-rendered prompt,
 * else to the composer.
 */
function returnFocus(opener, turn, ...fallbacks) {
  focusFirst(opener, turn == null ? null : rewindButton(turn, opener?.dataset.action), ...fallbacks, ui.prompt);
}

function assistantBlock() {
  const m = el("article", "msg assistant");
  const text = el("div", "text");
  m.append(text);
  return { el: m, text, reasoning: null, tools: new Map() };
}

async function renderTranscript() {
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
      again = focused.dataset.action ? rewindButton(turn, focused.dataset.action)
        : ui.transcript.querySelector(`.msg.user[data-turn="${Number(turn)}"]`);
    } else if (callId != null) {
      again = [...ui.transcript.querySelectorAll(".tool")].find((d) => d.dataset.callId === callId)?.querySelector("summary");
    }
    focusFirst(again, ui.prompt);
  }
  state.live = null;
  scrollDown();
}

function usageText(u) {
  return `${u.prompt_tokens} in · ${u.completion_tokens} out · ${u.total_tokens} tokens`;
}

// ---- live events ----

const EVENT_TYPES = [
  "turn_started", "assistant_delta", "reasoning_delta", "tool_call", "tool_result",
  "checkpoint_captured", "step_finished", "turn_finished", "rewound", "undone", "head_changed",
  "notice", "error", "approval_requested", "approval_resolved", "summary_started",
  "summary_finished", "compacted", "plan_mode", "lagged",
];

function connectEvents() {
  const id = state.sid;
  const es = new EventSource(`${s(id)}/events?after=${state.lastSeq}`);
  state.events = es;
  for (const t of EVENT_TYPES) {
    es.addEventListener(t, (m) => {
      if (state.events !== es) return;
      if (m.lastEventId) state.lastSeq = Number(m.lastEventId);
      let data = null;
      try {
        data = JSON.parse(m.data);
      } catch {
        return;
      }
      onEvent(t, data).catch(showError);
    });
  }
}

function liveBlock() {
  if (!state.live) {
    state.live = assistantBlock();
    ui.transcript.querySelector(".empty")?.remove();
    ui.transcript.append(state.live.el);
  }
  return state.live;
}

function setRunning(on) {
  state.running = on;
  ui.cancel.hidden = !on;
  ui.send.disabled = on;
  document.body.classList.toggle("running", on);
  setCompactButton();
}

async function onEvent(type, ev) {
  switch (type) {
    case "turn_started":
      setRunning(true);
      ui.transcript.querySelector(".empty")?.remove();
      state.live = null;
      // a turn that started while the transcript was read is already shown
      if (!ui.transcript.querySelector(`.msg.user[data-turn="${Number(ev.turn)}"]`)) {
        ui.transcript.append(userBlock(ev.prompt, ev.turn));
      }
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
      for (const a of ui.transcript.querySelectorAll(".approval")) {
        if (a.dataset.callId === ev.call_id) {
          const had = hasFocus(a);
          a.replaceChildren(el("span", null, `${a.dataset.command} — ${ev.decision}`));
          if (had) ui.prompt.focus();
          a.classList.add("resolved");
        }
      }
      break;
    case "turn_finished":
      setRunning(false);
      if (ev.usage) ui.usage.textContent = usageText(ev.usage);
      if (!ev.ok && ev.error) banner("error", el("span", null, `Turn ${ev.turn} failed: ${ev.error}`), button("Dismiss", hideBanner));
      await renderTranscript();
      await refreshSide();
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
      await renderTranscript();
      await refreshSide();
      break;
    case "compacted": {
      const text = compactedText(ev);
      state.notes.set(ev.head_id, { turn: ev.turn, text });
      if (state.live) {
        // compacted on its own during a turn: the line goes before the turn's prompt now; the
        // transcript is read again from the new head when the turn ends
        const m = ui.transcript.querySelector(`.msg.user[data-turn="${Number(ev.turn)}"]`);
        if (m) m.before(noteBlock(text));
        else ui.transcript.append(noteBlock(text));
      } else if (!state.running) {
        await renderTranscript();
        await refreshSide();
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
      if (!state.running) {
        await renderTranscript();
        await refreshSide();
      }
      break;
    default:
      break;
  }
  scrollDown();
}

function approvalBlock(ev) {
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

// ---- composer ----

async function send() {
  const prompt = ui.prompt.value;
  if (!prompt.trim() || state.running) return;
  if (!state.sid) await newSession();
  // running before the request: the turn's events can come before its answer
  setRunning(true);
  try {
    await call("POST", `${s(state.sid)}/messages`, { prompt });
  } catch (e) {
    setRunning(false);
    throw e;
  }
  ui.prompt.value = "";
}

ui.prompt.addEventListener("keydown", (e) => {
  if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    attempt(send);
  }
});
ui.send.addEventListener("click", () => attempt(send));
ui.cancel.addEventListener("click", () => attempt(() => call("POST", `${s(state.sid)}/cancel`, {})));
ui.newSession.addEventListener("click", () => attempt(newSession));
ui.select.addEventListener("change", () => attempt(() => openSession(ui.select.value)));
ui.compact.addEventListener("click", () => attempt(compact));
ui.planMode.addEventListener("change", () => attempt(() => setPlan(ui.planMode.checked)));

// ---- plan mode and compaction ----

const PROMPT_HINT = ui.prompt.placeholder;

/** Shows plan mode on or off: the switch, the indicator above the composer, the prompt's hint. */
function showPlan(on) {
  state.plan = on;
  ui.planMode.checked = on;
  ui.planIndicator.hidden = !on;
  ui.composer.classList.toggle("plan", on);
  ui.prompt.placeholder = on ? "Ask for a plan… (plan mode: nothing is changed)" : PROMPT_HINT;
}

async function setPlan(on) {
  try {
    if (!state.sid) await newSession(false);
    const status = await call("POST", `${s(state.sid)}/plan`, { on });
    showPlan(!!status.plan_mode);
  } catch (e) {
    showPlan(state.plan);
    throw e;
  }
}

function fmtTokens(n) {
  if (typeof n !== "number") return "?";
  return n >= 10000 ? `${Math.round(n / 1000)}k` : n >= 1000 ? `${(n / 1000).toFixed(1)}k` : String(n);
}

function compactedText(ev) {
  return `${ev.automatic ? "Compacted automatically (the conversation was near the model's context limit)" : "Compacted"}: ` +
    `about ${fmtTokens(ev.before_tokens)} → ${fmtTokens(ev.after_tokens)} tokens. The full conversation stays in Versions.`;
}

function noteBlock(text) {
  const n = el("div", "msg note", text);
  n.setAttribute("role", "note");
  return n;
}

// The compact button is never `disabled` (a disabled button drops the keyboard focus): while a
// turn or a summary runs it says so with aria-disabled and does nothing.
function setCompactButton() {
  const busy = state.compacting || state.running || !state.sid;
  ui.compact.setAttribute("aria-disabled", String(busy));
  ui.compact.setAttribute("aria-busy", String(state.compacting));
  ui.compact.textContent = state.compacting ? "Compacting…" : "Compact";
}

async function compact() {
  if (!state.sid || state.compacting || state.running) return;
  state.compacting = true;
  setCompactButton();
  banner("info", el("span", null, "Compacting: the model is summarizing the conversation before the latest turn…"));
  try {
    const r = await call("POST", `${s(state.sid)}/compact`, {});
    if (r.session_id !== state.sid) {
      await loadSessions(r.session_id);
      await openSession(r.session_id);
    } else {
      await renderTranscript();
      await refreshSide();
    }
    hideBanner();
  } finally {
    state.compacting = false;
    setCompactButton();
  }
}

// ---- rewind ----

function fmtSize(n) {
  if (n == null) return "";
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

async function rewind(turn, scope, opener) {
  const plan = await call("POST", `${s(state.sid)}/rewind/prepare`, { turn, scope });
  const body = [];
  const unavailable = plan.blockers.filter((b) => b.kind === "unavailable");
  for (const b of unavailable) body.push(el("p", "warn", `Not available: ${b.reason}`));
  if (scope !== "code") body.push(el("p", null, "The conversation goes back to before this prompt: ", el("q", null, plan.prompt)));
  if (scope !== "conversation") {
    if (plan.files.length === 0) body.push(el("p", null, "No file changes to restore."));
    else {
      const t = el("table", "plan-files");
      t.append(el("tr", null, el("th", null, "file"), el("th", null, "action"), el("th", null, "size")));
      for (const f of plan.files) {
        t.append(el("tr", null, el("td", null, el("code", null, f.path)), el("td", null, f.action), el("td", null, fmtSize(f.size))));
      }
      body.push(t);
    }
  }
  let choice = null;
  if (plan.conflicts.length > 0) {
    const fs = el("fieldset", "conflicts", el("legend", null, `${plan.conflicts.length} file(s) changed since Retrace wrote them`));
    for (const c of plan.conflicts) fs.append(el("div", null, el("code", null, c.path), ` — ${c.reason}`));
    for (const [v, label] of [["skip", "Skip them (keep your changes)"], ["overwrite", "Overwrite them"]]) {
      const r = el("input");
      r.type = "radio";
      r.name = "on_conflict";
      r.value = v;
      r.checked = v === "skip";
      fs.append(el("label", null, r, ` ${label}`));
    }
    body.push(fs);
    choice = fs;
  }
  if (scope !== "conversation" && plan.gaps.length > 0) {
    const g = el("div", "warn", el("p", null, "These changes were not tracked; their effects stay:"));
    const ul = el("ul");
    for (const gap of plan.gaps) ul.append(el("li", null, `turn ${gap.turn}: ${gap.tool ?? gap.reason} ${gap.detail ?? gap.path ?? ""}`));
    g.append(ul);
    body.push(g);
  }
  ui.dialogTitle.textContent = `Restore ${scope === "both" ? "code and conversation" : scope} to before turn ${turn}`;
  ui.dialogBody.replaceChildren(...body);
  ui.dialogConfirm.disabled = unavailable.length > 0;
  openDialog(opener, turn, async () => {
    const on_conflict = choice ? choice.querySelector("input:checked").value : "refuse";
    const result = await call("POST", `${s(state.sid)}/rewind/commit`, {
      plan_id: plan.plan_id,
      confirm: true,
      on_conflict,
    });
    dialog.committed = true;
    ui.dialog.close();
    await afterRewind(result, scope, turn, opener);
  });
}

// The preview is a modal <dialog>: the page behind it is inert and Tab stays inside. It opens on
// Confirm (Cancel when nothing can be restored); Enter confirms, Esc or Cancel closes it and
// gives the focus back to the action that opened it, whose menu stays shown meanwhile. A failed
// commit says why inside the dialog.
const dialog = { opener: null, turn: null, confirm: null, committed: false, busy: false };

function openDialog(opener, turn, confirm) {
  Object.assign(dialog, { opener, turn, confirm, committed: false, busy: false });
  opener?.closest(".msg.user")?.classList.add("menu-open");
  ui.dialogError.hidden = true;
  ui.dialogError.textContent = "";
  ui.dialog.showModal();
  focusFirst(ui.dialogConfirm, ui.dialogCancel);
}

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
    ui.dialogError.textContent = err instanceof ApiError ? `${err.code}: ${err.message}` : String(err?.message ?? err);
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

/** What a restore did to the files, skipped ones included, or plainly that no file changed. */
function filesSaid(result) {
  const done = new Set([...result.files_written, ...result.files_deleted]);
  const skipped = result.conflicts.filter((c) => !done.has(c.path)).length;
  const kept = skipped === 1 ? "1 skipped (kept as it is)" : `${skipped} skipped (kept as they are)`;
  const parts = [];
  if (result.files_written.length > 0) parts.push(`${result.files_written.length} written`);
  if (result.files_deleted.length > 0) parts.push(`${result.files_deleted.length} deleted`);
  if (parts.length === 0) {
    return { changed: false, text: skipped > 0 ? `no file changed — ${kept}` : "no file changed (every file already as it was)" };
  }
  if (skipped > 0) parts.push(kept);
  return { changed: true, text: parts.join(", ") };
}

async function afterRewind(result, scope, turn, opener) {
  if (result.session_id !== state.sid) {
    await loadSessions(result.session_id);
    await openSession(result.session_id);
  } else {
    await renderTranscript();
    await refreshSide();
  }
  const files = filesSaid(result);
  const msg = (result.partial
    ? `Restored conversation to before turn ${turn}, but no file was restored (they changed since the preview).`
    : scope === "conversation"
    ? `Restored conversation to before turn ${turn}.`
    : !files.changed && scope === "code"
      ? `Nothing was restored: ${files.text}.`
      : !files.changed
        ? `Restored conversation to before turn ${turn}; ${files.text}.`
        : `Restored ${scope === "both" ? "code and conversation" : "code"} to before turn ${turn}: ${files.text}.`) +
    (result.error ? ` — ${result.error}` : "");
  const kids = [el("span", null, msg)];
  const undoButton = result.undo_available ? button("Undo", () => attempt(() => undo(result.transaction_id)), "undo") : null;
  if (undoButton) kids.push(undoButton);
  kids.push(button("Dismiss", hideBanner));
  banner(result.ok && !result.partial ? "info" : "error", ...kids);
  if (scope !== "code") {
    // the prompt comes back into the composer, and the focus with it
    ui.prompt.value = result.prompt;
    ui.prompt.focus();
  } else {
    returnFocus(opener, turn, undoButton);
  }
}

async function undo(transaction_id) {
  const result = await call("POST", `${s(state.sid)}/undo`, transaction_id ? { transaction_id } : {});
  await renderTranscript();
  await refreshSide();
  banner("info", el("span", null, "Undone."), button("Dismiss", hideBanner));
  return result;
}

async function fork(turn, opener) {
  await call("POST", `${s(state.sid)}/fork`, { turn });
  await renderTranscript();
  await refreshSide();
  banner("info", el("span", null, `Forked from turn ${turn}.`), button("Dismiss", hideBanner));
  // the fork's transcript ends before this prompt: the focus goes to the composer
  returnFocus(opener, turn);
}

async function summarize(turn, direction, opener) {
  banner("info", el("span", null, "Summarizing…"));
  await call("POST", `${s(state.sid)}/summarize`, { turn, direction });
  await renderTranscript();
  await refreshSide();
  banner("info", el("span", null, "Summary written to a new head."), button("Dismiss", hideBanner));
  returnFocus(opener, turn);
}

// ---- versions ----

async function refreshSide() {
  if (!ui.versions.hidden) await renderVersions();
}

async function renderVersions() {
  const id = state.sid;
  if (!id) return;
  const [heads, cps] = await Promise.all([
    call("GET", `${s(id)}/heads`),
    call("GET", `${s(id)}/checkpoints`),
  ]);
  if (id !== state.sid) return;
  const children = new Map();
  const ids = new Set(heads.map((h) => h.id));
  for (const h of heads) {
    const p = h.parent_head && ids.has(h.parent_head) ? h.parent_head : null;
    if (!children.has(p)) children.set(p, []);
    children.get(p).push(h);
  }
  const tree = (parent) => {
    const ul = el("ul", "head-tree");
    for (const h of children.get(parent) ?? []) {
      const li = el("li", `head${h.selected ? " selected" : ""}${h.retired ? " retired" : ""}`);
      li.dataset.head = h.id;
      const name = h.name ? `${h.name}` : h.id;
      const row = el("div", "head-row",
        el("span", "head-name", name),
        el("span", "head-meta", ` ${h.kind} · ${h.message_count} messages${h.selected ? " · selected" : ""}${h.retired ? " · retired" : ""}`),
      );
      row.tabIndex = -1; // the focus lands here after a switch to this head
      li.append(row);
      if (!h.selected) {
        const actions = el("div", "head-actions");
        actions.append(button("Switch", () => attempt(() => switchHead(h.id))));
        if (!h.retired) actions.append(button("Retire", () => attempt(() => retireHead(h.id)), "danger"));
        li.append(actions);
      }
      if (children.has(h.id)) li.append(tree(h.id));
      ul.append(li);
    }
    return ul;
  };
  // the focused head (a Switch or Retire button), to focus it again in the new tree
  const focusedHead = hasFocus(ui.heads) ? document.activeElement.closest(".head")?.dataset.head : null;
  ui.heads.replaceChildren(tree(null));
  if (focusedHead != null) {
    const li = [...ui.heads.querySelectorAll(".head")].find((h) => h.dataset.head === focusedHead);
    focusFirst(li?.querySelector(":scope > .head-actions button"), li?.querySelector(":scope > .head-row"), ui.versions);
  }
  ui.checkpoints.replaceChildren(
    ...cps.entries.map((c) => {
      const li = el("li", null, el("div", null, el("strong", null, `Turn ${c.turn}`), ` ${c.prompt}`));
      if (c.paths.length) {
        const ul = el("ul", "cp-files");
        for (const p of c.paths) ul.append(el("li", null, el("code", null, p)));
        li.append(ul);
      } else li.append(el("div", "muted", "no file changes"));
      return li;
    }),
  );
}

async function switchHead(head) {
  await call("POST", `${s(state.sid)}/switch`, { head });
  await renderTranscript();
  await renderVersions();
}

async function retireHead(head) {
  await call("POST", `${s(state.sid)}/retire`, { head });
  await renderVersions();
}

// The versions panel: opening it moves the focus into it; Esc inside closes it and gives the
// focus back to its toggle.
function showVersions(open) {
  const had = hasFocus(ui.versions);
  ui.versions.hidden = !open;
  ui.versionsToggle.setAttribute("aria-expanded", String(open));
  if (open) ui.versions.focus();
  else if (had) ui.versionsToggle.focus();
}

ui.versionsToggle.addEventListener("click", () =>
  attempt(async () => {
    showVersions(ui.versions.hidden);
    await refreshSide();
  }),
);
ui.versions.addEventListener("keydown", (e) => {
  if (e.key === "Escape") {
    e.preventDefault();
    showVersions(false);
  }
});

// ---- start ----

async function start() {
  setCompactButton();
  const wanted = new URL(location.href).searchParams.get("session");
  const list = await loadSessions(wanted);
  const id = wanted ?? list[0]?.id;
  if (id) await openSession(id);
  else ui.transcript.replaceChildren(el("p", "empty", "No session yet: type a prompt below, or press New session."));
}

attempt(start);
