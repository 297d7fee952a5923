// The HTTP API of `retrace serve` (docs/API.md): requests and the event stream. The token is an
// HttpOnly cookie the server set when the page was opened with `?token=`; same-origin `fetch` and
// `EventSource` send it.

/** An API failure: the controller's `{error: {code, message, details}}`. */
export class ApiError extends Error {
  constructor(status, body) {
    super(body?.error?.message ?? `HTTP ${status}`);
    this.status = status;
    this.code = body?.error?.code ?? "http";
    this.details = body?.error?.details;
  }
}

/** One request; the JSON answer (null for 204). */
export async function call(method, path, body) {
  const init = { method, headers: {} };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const res = await fetch(path, init);
  const text = await res.text();
  const json = text ? JSON.parse(text) : null;
  if (!res.ok) throw new ApiError(res.status, json);
  return json;
}

export const s = (id) => `/api/sessions/${encodeURIComponent(id)}`;

/** The event types the page listens to (the server names each SSE event by its `type`). */
export const EVENT_TYPES = [
  "turn_started", "assistant_delta", "reasoning_delta", "item_started", "item_updated",
  "item_completed", "item_removed", "tool_call", "tool_result", "checkpoint_captured",
  "step_finished", "turn_finished", "rewound", "undone", "redone", "head_changed", "notice", "error",
  "approval_requested", "approval_resolved", "summary_started", "summary_finished", "compacted",
  "plan_mode", "usage", "lagged",
];

/**
 * Session `id`'s events after sequence number `after`: `on(type, seq, data)` for each, where `seq`
 * is the event's number (null if it has none) and `data` its JSON (undefined if it is not JSON).
 * Close the returned `EventSource` to stop.
 */
export function subscribe(id, after, on) {
  const es = new EventSource(`${s(id)}/events?after=${after}`);
  for (const t of EVENT_TYPES) {
    es.addEventListener(t, (m) => {
      let data;
      try {
        data = JSON.parse(m.data);
      } catch {
        data = undefined;
      }
      on(t, m.lastEventId ? Number(m.lastEventId) : null, data);
    });
  }
  return es;
}
