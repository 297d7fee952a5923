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

export function usageText(u) {
  return `${u.prompt_tokens} in · ${u.completion_tokens} out · ${u.total_tokens} tokens`;
}
