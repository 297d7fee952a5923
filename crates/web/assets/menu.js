// A small button that opens a menu (a prompt's rewind actions, a checkpoint's in the Versions
// panel): closed, it is one control; open, its items are a list under it. Arrows, Home and End
// move between the items that can be chosen, Esc closes it and gives the focus back to the button,
// Tab or a click elsewhere closes it; choosing an item closes it first. Items that say what they
// do (`data-explain`) have it shown at the foot of the list for the one highlighted: under the
// pointer, else the focused one (as the terminal UI shows the highlighted item's explanation).
import { el } from "./util.js";

/** The open menu, if any: `{box, close}`. */
let openMenu = null;

/** Each menu control → its `open(focusAction)`, so a copy built again can open where it was. */
const opens = new WeakMap();

document.addEventListener("pointerdown", (e) => {
  if (openMenu && !openMenu.box.contains(e.target)) openMenu.close(false);
});

/** Room kept between an open list and the edge of the area it shows in, in pixels. */
const MARGIN = 4;

/**
 * Places the open `list` of menu control `box` whole in the visible part of what scrolls it (the
 * transcript, the Versions panel): under its `toggle` where it fits, else above it where it fits
 * (never up past the top: under the header, out of reach), else under it with the area scrolled
 * until the list shows whole (the last prompt's menu when the composer leaves too little room:
 * the list would run on under the composer), with room made at the area's end when it cannot
 * scroll that far (a spacer, gone when the menu closes). A list shown as a sheet (fixed, on a
 * phone) is left where it is.
 */
function place(box, toggle, list) {
  box.classList.remove("up");
  if (getComputedStyle(list).position === "fixed") return;
  const scroller = box.closest(".transcript, .versions");
  const area = scroller?.getBoundingClientRect() ?? { top: 0, bottom: window.innerHeight };
  const r = list.getBoundingClientRect();
  if (r.bottom + MARGIN <= area.bottom) return;
  const t = toggle.getBoundingClientRect();
  // the list's height and its gap to the toggle, as it shows under it
  if (r.bottom - t.bottom + MARGIN <= t.top - area.top) {
    box.classList.add("up");
    return;
  }
  if (!scroller) return;
  // down, scrolled by what runs past the bottom, but never so far that its top goes out of view
  const by = Math.min(r.bottom + MARGIN - area.bottom, r.top - MARGIN - area.top);
  if (by <= 0) return;
  const left = scroller.scrollHeight - scroller.clientHeight - scroller.scrollTop;
  if (left < by + MARGIN) {
    // the list starts above the area's end: room as tall as the list is always enough
    const spacer = scroller.querySelector(":scope > .menu-room") ?? scroller.appendChild(el("div", "menu-room"));
    spacer.style.height = `${Math.ceil(r.height) + MARGIN}px`;
  }
  scroller.scrollTop += by;
}

/** Takes away the room a menu made at the end of what scrolls it. */
function unplace(box) {
  box.closest(".transcript, .versions")?.querySelector(":scope > .menu-room")?.remove();
}

/**
 * A menu control of class `cls`: a button showing `face` (its accessible name `label`) that opens
 * `items` (buttons; each closes the menu before its own click listener runs). The control is the
 * returned element; its button carries `data-action="menu"`.
 */
export function menuControl(cls, face, label, items) {
  const toggle = el("button", "menu-toggle", face);
  toggle.type = "button";
  toggle.dataset.action = "menu";
  toggle.setAttribute("aria-haspopup", "menu");
  toggle.setAttribute("aria-expanded", "false");
  toggle.setAttribute("aria-label", label);
  toggle.title = label;
  const list = el("div", "menu-list");
  list.setAttribute("role", "menu");
  list.setAttribute("aria-label", label);
  list.hidden = true;
  // what the highlighted item does (each item's accessible description says it already)
  const explain = items.some((b) => b.dataset.explain) ? el("div", "menu-explain") : null;
  explain?.setAttribute("aria-hidden", "true");
  const show = (b) => {
    if (explain) explain.textContent = b?.dataset.explain ?? "";
  };
  // as tall as the longest explanation, so the list keeps its size whichever item is highlighted
  const fitExplain = () => {
    if (!explain) return;
    explain.style.minHeight = "";
    let most = 0;
    for (const b of items) {
      show(b);
      most = Math.max(most, explain.getBoundingClientRect().height);
    }
    explain.style.minHeight = `${Math.ceil(most)}px`;
  };
  const itemAt = (t) => items.find((b) => b.contains(t));
  const box = el("div", cls, toggle, list);
  const enabled = () => items.filter((b) => !b.disabled);
  const close = (focus) => {
    unplace(box);
    list.hidden = true;
    toggle.setAttribute("aria-expanded", "false");
    box.classList.remove("open");
    if (openMenu?.box === box) openMenu = null;
    if (focus) toggle.focus();
  };
  const open = (action) => {
    openMenu?.close(false);
    list.hidden = false;
    toggle.setAttribute("aria-expanded", "true");
    box.classList.add("open");
    const can = enabled();
    const first = can.find((b) => b.dataset.action === action) ?? can[0];
    fitExplain();
    show(first ?? items[0]);
    place(box, toggle, list);
    openMenu = { box, close };
    (first ?? toggle).focus();
  };
  opens.set(box, open);
  for (const b of items) {
    b.setAttribute("role", "menuitem");
    // closes before the item's own listener (added earlier) runs: capture on the item
    b.addEventListener("click", () => close(true), { capture: true });
    list.append(b);
  }
  if (explain) {
    list.append(explain);
    list.addEventListener("focusin", (e) => show(itemAt(e.target)));
    list.addEventListener("pointerover", (e) => {
      const b = itemAt(e.target);
      if (b) show(b);
    });
    list.addEventListener("pointerleave", () => show(itemAt(document.activeElement)));
  }
  toggle.addEventListener("click", () => (list.hidden ? open() : close(true)));
  toggle.addEventListener("keydown", (e) => {
    if ((e.key === "ArrowDown" || e.key === "ArrowUp") && list.hidden) {
      e.preventDefault();
      open();
    }
  });
  list.addEventListener("keydown", (e) => {
    const can = enabled();
    const i = can.indexOf(document.activeElement);
    const n = can.length;
    const to = { ArrowDown: i + 1, ArrowUp: i - 1, Home: 0, End: n - 1 }[e.key];
    if (to != null && n > 0) {
      e.preventDefault();
      can[(to + n) % n].focus();
    } else if (e.key === "Escape") {
      e.preventDefault();
      e.stopPropagation();
      close(true);
    } else if (e.key === "Tab") {
      close(false);
    }
  });
  return box;
}

/** Whether menu control `box` is open now. */
export function isOpen(box) {
  return !!box?.classList.contains("open");
}

/**
 * Opens `box` (a menu control built again in place of an open one) with the focus on its item of
 * `action` where it can be chosen, else on its first: a re-render never closes a menu under the
 * keyboard.
 */
export function openAgain(box, action) {
  opens.get(box)?.(action);
}
