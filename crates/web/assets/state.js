// What the page knows besides what it shows: the open session, its items and event stream, and
// what this page started. Everything else is read from the server and rendered.
import { ItemList } from "./items.js";

export const state = {
  sid: null,
  status: null, // the open session's status (its model, workspace and branch), from its snapshot
  usage: null, // the open session's tally (its snapshot's, then its `usage` events'): tokens, cost, context
  items: new ItemList(), // the session's items: the last snapshot's, changed by the events since
  entries: new Map(), // turn → its checkpoint entry (`GET …/checkpoints`): what each turn offers
  events: null, // the event stream (an EventSource), after the snapshot's `last_event_seq`
  running: false,
  held: null, // the other Retrace that holds the open session (its status's `held_by`): it is shown read-only
  compacting: false, // this page asked for a compaction that has not answered yet
  plan: false,
};
