// What the page knows besides what it shows: the open session, its event stream, and what this
// page started. Everything else is read from the server and rendered.

export const state = {
  sid: null,
  events: null,
  lastSeq: null,
  running: false,
  live: null, // the assistant block of the running turn: {el, text, reasoning, tools}
  compacting: false, // this page asked for a compaction that has not answered yet
  plan: false,
  notes: new Map(), // head id → {turn, text}: the compaction line shown on that head
};
