// Just enough of the page's elements for the modules' element builders (`el`, their listeners) in
// node: importing this module installs a `document` that makes them. Not a test itself (the test
// runner takes only `*.test.mjs`).

export class Node {
  constructor(tag) {
    this.tag = tag;
    this.children = [];
    this.dataset = {};
    this.listeners = {};
    this.text = "";
    this.checked = false;
  }
  append(...kids) {
    this.children.push(...kids.map((k) => (typeof k === "string" ? { textContent: k } : k)));
  }
  addEventListener(type, f) {
    (this.listeners[type] ??= []).push(f);
  }
  setAttribute(k, v) {
    this[k] = v;
  }
  replaceChildren(...kids) {
    this.children = [];
    this.append(...kids);
    this.text = "";
  }
  focus() {
    globalThis.focused = this;
  }
  set textContent(t) {
    this.children = [];
    this.text = t;
  }
  get textContent() {
    return this.text + this.children.map((c) => c.textContent).join("");
  }
  /** Every element under this one, depth first. */
  all() {
    return this.children.flatMap((c) => (c instanceof Node ? [c, ...c.all()] : []));
  }
}

globalThis.document = {
  createElement: (tag) => new Node(tag),
  createTextNode: (text) => ({ textContent: text }),
};

/** Every element in `nodes` and under them. */
export const within = (...nodes) => nodes.flatMap((e) => [e, ...e.all()]);

/** Clicks `e`: runs its click listeners, and waits for what they started. */
export async function click(e) {
  await Promise.all((e.listeners.click ?? []).map((f) => f()));
}
