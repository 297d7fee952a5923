// Small helpers every view uses: building elements, moving the keyboard focus, formatting numbers.
// Nothing here touches the page at import time (the head tree's unit test imports it in node).

/** An element with a class and text (or children). */
export function el(tag, cls, ...kids) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  for (const k of kids) {
    if (k == null) continue;
    e.append(typeof k === "string" ? document.createTextNode(k) : k);
  }
  return e;
}

export function button(label, onClick, cls) {
  const b = el("button", cls, label);
  b.type = "button";
  b.addEventListener("click", onClick);
  return b;
}

/** Whether keyboard focus is inside `e` (or on it). */
export function hasFocus(e) {
  return e.contains(document.activeElement);
}

/** Focuses the first of `candidates` that is in the page and takes focus; false if none did. */
export function focusFirst(...candidates) {
  for (const c of candidates) {
    if (!c || !c.isConnected) continue;
    c.focus();
    if (document.activeElement === c) return true;
  }
  return false;
}

export function fmtSize(n) {
  if (n == null) return "";
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

export function fmtTokens(n) {
  if (typeof n !== "number") return "?";
  return n >= 10000 ? `${Math.round(n / 1000)}k` : n >= 1000 ? `${(n / 1000).toFixed(1)}k` : String(n);
}

/** `n` of `what`, with its plural: "1 turn", "0 files", "2 matches" (as the CLI's words). */
export function count(n, what) {
  if (n === 1) return `1 ${what}`;
  const es = ["s", "x", "ch", "sh"].some((e) => what.endsWith(e));
  return `${n} ${what}${es ? "es" : "s"}`;
}

/**
 * How long ago `when` (an RFC 3339 time) was, seen at `now` (ms): "just now", "5 minutes ago",
 * "3 hours ago", "yesterday", "4 days ago", "3 weeks ago", "5 months ago", "2 years ago" (as the
 * CLI says it); a time in the future reads "just now", one that cannot be read "".
 */
export function ago(when, now = Date.now()) {
  const t = Date.parse(when);
  if (Number.isNaN(t)) return "";
  const s = Math.floor((now - t) / 1000);
  const [MIN, HOUR, DAY] = [60, 3600, 86400];
  const unit = (n, what) => `${count(Math.floor(n), what)} ago`;
  if (s < MIN) return "just now";
  if (s < HOUR) return unit(s / MIN, "minute");
  if (s < DAY) return unit(s / HOUR, "hour");
  if (s < 2 * DAY) return "yesterday";
  if (s < 14 * DAY) return unit(s / DAY, "day");
  if (s < 60 * DAY) return unit(s / (7 * DAY), "week");
  if (s < 365 * DAY) return unit(s / (30 * DAY), "month");
  return unit(s / (365 * DAY), "year");
}

/** The last part of a path: the workspace's folder name. */
export function baseName(path) {
  const parts = String(path ?? "").split("/").filter(Boolean);
  return parts.length ? parts[parts.length - 1] : String(path ?? "");
}

/** Invisible characters that reorder or hide text (the terminal UI's `escape::invisible`). */
const INVISIBLE =
  /[\u00ad\u034f\u061c\u115f\u1160\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164\ufeff\uffa0\ufff9-\ufffb]/u;

/**
 * A single-line value from the model or a server (a command, a tool's name) as the terminal UI
 * shows it: every control character and every invisible format character (a bidi override that
 * would reorder the rest of the line, a zero-width space) written as `\u{202e}`, `\n`, `\t`.
 */
export function visible(s) {
  let out = "";
  for (const ch of String(s)) {
    const cp = ch.codePointAt(0);
    if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0) || INVISIBLE.test(ch) || (cp >= 0xe0000 && cp <= 0xe007f))
      out += `\\u{${cp.toString(16)}}`;
    else out += ch;
  }
  return out;
}
