// The model's answers as markdown, the constructs the terminal UI shows too: bold, italic, code
// spans, headings, lists, block quotes, links, fenced code, tables (GitHub's flavour, by the
// vendored `marked`), the fenced code in syntax colours when its fence names a language
// (syntax.js). Nothing the model writes runs: raw HTML in its text is shown as text,
// images as their words (the page loads nothing from elsewhere), and what marked makes is
// sanitised by the vendored DOMPurify with an allow-list of tags and attributes before it enters
// the page (links only to http, https and mailto, opening in a new tab). This is the only module
// that turns text into elements other than through `textContent`.
import { Marked } from "./vendor/marked.esm.js";
import DOMPurify from "./vendor/purify.es.js";
import { highlighted } from "./syntax.js";

/** Text as HTML shows it, every markup character escaped. */
function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

const marked = new Marked({ gfm: true, breaks: false, async: false });
marked.use({
  renderer: {
    // HTML the model wrote (a block or inline) is shown as the text it is
    html(token) {
      return escapeHtml(token.text ?? token.raw ?? "");
    },
    // an image is never fetched: its words stand for it
    image(token) {
      return escapeHtml(token.text || token.href || "");
    },
    // fenced code in a language syntax.js knows, in colour (sanitised below like the rest); any
    // other code as marked renders it
    code(token) {
      const html = highlighted(token.text.replace(/\n$/, ""), token.lang);
      return html == null ? false : `<pre><code class="hljs">${html}\n</code></pre>\n`;
    },
  },
});

const ALLOWED_TAGS = [
  "p", "br", "hr", "strong", "em", "del", "code", "pre", "blockquote",
  "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "a",
  "table", "thead", "tbody", "tr", "th", "td",
  // the parts of highlighted code (`class="hljs-…"`)
  "span",
];
const ALLOWED_ATTR = ["href", "title", "align", "start", "class"];
const PURIFY = {
  ALLOWED_TAGS,
  ALLOWED_ATTR,
  ALLOWED_URI_REGEXP: /^(?:https?:|mailto:)/i,
  ALLOW_DATA_ATTR: false,
  RETURN_DOM_FRAGMENT: true,
};

// links open in a new tab, never with a hold on this page
DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A" && node.hasAttribute("href")) {
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer nofollow");
  }
});

/** `text` (the model's markdown) as a sanitised fragment of elements. */
export function markdownFragment(text) {
  return DOMPurify.sanitize(marked.parse(text ?? ""), PURIFY);
}

/** Fills `target` with `text` rendered as markdown (its earlier content replaced). */
export function renderMarkdown(target, text) {
  target.replaceChildren(markdownFragment(text));
}
