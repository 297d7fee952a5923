// The HTTP API of `retrace serve` (docs/API.md). The token is an HttpOnly cookie the server set
// when the page was opened with `?token=`; same-origin `fetch` sends it.

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
