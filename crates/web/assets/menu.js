// A small button that opens a menu (a prompt's rewind actions, a checkpoint's in the Versions
// panel): closed, it is one control; open, its items are a list under it. Arrows, Home and End
// move between the items that can be chosen, Esc closes it and gives the focus back to the button,
// Tab or a click elsewhere closes it; choosing an item closes it first.
import { el } from "./util.js";

/** The open menu, if any: `{box, close}`. */
let openMenu = null;

/** Each menu control → its `open(focusAction)`, so a copy built again can open where it was. */
const opens = new WeakMap();

document.addEventListener("pointerdown", (e) => {
  if (openMenu && !openMenu.box.contains(e.target)) openMenu.close(false);
});

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
  const box = el("div", cls, toggle, list);
  const enabled = () => items.filter((b) => !b.disabled);
  const close = (focus) => {
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
    // upward when it would run past the bottom of what scrolls it and there is more room above
    box.classList.remove("up");
    const r = list.getBoundingClientRect();
    const area = box.closest(".transcript, .versions")?.getBoundingClientRect() ?? { top: 0, bottom: window.innerHeight };
    const above = toggle.getBoundingClientRect().top - area.top;
    if (r.bottom > area.bottom && above > area.bottom - r.top) {
      box.classList.add("up");
      // Never up past the top of what scrolls it (under the header, out of reach): down, the
      // list scrolls into view with its area.
      if (list.getBoundingClientRect().top < area.top) box.classList.remove("up");
    }
    openMenu = { box, close };
    const can = enabled();
    (can.find((b) => b.dataset.action === action) ?? can[0] ?? toggle).focus();
  };
  opens.set(box, open);
  for (const b of items) {
    b.setAttribute("role", "menuitem");
    // closes before the item's own listener (added earlier) runs: capture on the item
    b.addEventListener("click", () => close(true), { capture: true });
    list.append(b);
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
