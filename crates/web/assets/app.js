// Placeholder for the web UI: lists the sessions of the server's workspace. The API token is an
// HttpOnly cookie the server set when the page was opened with `?token=`; `fetch` sends it.
const list = document.getElementById("sessions");

function item(text) {
  const li = document.createElement("li");
  li.textContent = text; // never innerHTML: prompts and paths come from the workspace
  return li;
}

async function load() {
  try {
    const res = await fetch("/api/sessions");
    const body = await res.json();
    if (!res.ok) {
      list.replaceChildren(item(`error: ${body.error.message}`));
      return;
    }
    if (body.length === 0) {
      list.replaceChildren(item("no session yet"));
      return;
    }
    list.replaceChildren(...body.map((s) => item(`${s.id} — ${s.turns} turns, created ${s.created_at ?? "?"}`)));
  } catch (e) {
    list.replaceChildren(item(`error: ${e}`));
  }
}

load();
