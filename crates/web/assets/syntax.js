// Syntax colours for the fenced code of the model's answers, as the terminal UI shows them: the
// vendored highlight.js core with a few common languages (crates/web/assets/vendor/README.md),
// chosen by the fence's language name or one of its aliases ("py", "sh", "ts"…); a fence that
// names none, or one not here, stays plain. What `highlighted` gives is the code escaped, with
// `<span class="hljs-…">` around its parts: markdown.js sanitises it with the rest of the answer.
import hljs from "./vendor/highlight/core.js";
import bash from "./vendor/highlight/bash.min.js";
import c from "./vendor/highlight/c.min.js";
import cpp from "./vendor/highlight/cpp.min.js";
import css from "./vendor/highlight/css.min.js";
import diff from "./vendor/highlight/diff.min.js";
import go from "./vendor/highlight/go.min.js";
import ini from "./vendor/highlight/ini.min.js";
import java from "./vendor/highlight/java.min.js";
import javascript from "./vendor/highlight/javascript.min.js";
import json from "./vendor/highlight/json.min.js";
import markdown from "./vendor/highlight/markdown.min.js";
import python from "./vendor/highlight/python.min.js";
import rust from "./vendor/highlight/rust.min.js";
import sql from "./vendor/highlight/sql.min.js";
import typescript from "./vendor/highlight/typescript.min.js";
import xml from "./vendor/highlight/xml.min.js";
import yaml from "./vendor/highlight/yaml.min.js";

const LANGUAGES = { bash, c, cpp, css, diff, go, ini, java, javascript, json, markdown, python, rust, sql, typescript, xml, yaml };
for (const [name, grammar] of Object.entries(LANGUAGES)) hljs.registerLanguage(name, grammar);
hljs.registerAliases(["shell", "console"], { languageName: "bash" });
// never a warning in the console: a language not here is plain text, not an error
hljs.configure({ ignoreUnescapedHTML: true });

/** The language a fence's info string names (its first word), if it is one here. */
export function fenceLanguage(info) {
  const name = String(info ?? "").trim().split(/\s+/)[0].toLowerCase();
  return name && hljs.getLanguage(name) ? name : null;
}

/**
 * `code` in language `info` (a fence's info string) as HTML with its parts coloured: escaped
 * text and `<span class="hljs-…">`s; null when the fence names no language here.
 */
export function highlighted(code, info) {
  const language = fenceLanguage(info);
  if (!language) return null;
  try {
    return hljs.highlight(code, { language, ignoreIllegals: true }).value;
  } catch {
    return null;
  }
}
