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
