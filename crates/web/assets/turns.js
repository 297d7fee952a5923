// Each turn's results as the page shows them, on its prompt and in the Versions panel: the
// summary its checkpoint entry counts (`added`, `removed`: no request per turn), the results read
// from `GET …/turns/{n}/results` only when opened. A finished turn's results never change, so
// they are read once per session (a turn still running, or recorded before the counts were, is
// read at each opening); which ones are open is kept when the page shows them again.
import { call, s } from "./api.js";
import { entryCounts, resultsSection, resultsSummary } from "./results.js";
import { state } from "./state.js";

/** `session turn` → the promise of a finished turn's results. */
const read = new Map();
/** `where session turn` of each results section open now. */
const open = new Set();

function load(sid, turn, finished) {
  const key = `${sid} ${turn}`;
  const had = read.get(key);
  if (had) return had;
  const p = call("GET", `${s(sid)}/turns/${encodeURIComponent(turn)}/results`);
  if (finished) {
    read.set(key, p);
    p.catch(() => read.delete(key));
  }
  return p;
}

/**
 * The results section of checkpoint entry `entry`'s turn, shown `where` ("prompt" or "panel"):
 * its summary kept in `data-summary` (so that a new read of the entries replaces it only when it
 * says something new).
 */
export function turnResults(entry, where) {
  const sid = state.sid;
  const summary = resultsSummary(entryCounts(entry));
  const key = `${where} ${sid} ${entry.turn}`;
  const box = resultsSection(summary, () => load(sid, entry.turn, entry.added != null), {
    open: open.has(key),
    onToggle: (on) => (on ? open.add(key) : open.delete(key)),
  });
  box.dataset.turn = String(entry.turn);
  box.dataset.summary = summary;
  return box;
}
