// Retrace web UI (SPEC §9.2): a session's transcript with live updates, a rewind menu on each
// prompt, each turn's results, each file's history, versions; the model, workspace and branch.
// The page's entry module: it wires the modules together, installs the listeners on the page's
// fixed controls and opens a session. Each module is one idea (CONTRIBUTING.md, "A web UI view or
// action"), and imports point one way.
import { attempt } from "./banner.js";
import { installComposer } from "./composer.js";
import { setCompactButton } from "./controls.js";
import { installDialog } from "./dialog.js";
import { installHistory, openHistory } from "./filehistory.js";
import { installHeader, loadHeader, setStartWith } from "./header.js";
import { setFileHistory } from "./filelink.js";
import { setTurnActions } from "./messages.js";
import { HEAD_ACTIONS, runTurnAction } from "./rewind.js";
import { loadSessions } from "./picker.js";
import { newSession, openSession } from "./sessions.js";
import { setStartWithBackend, transcriptEmpty } from "./transcript.js";
import { ui } from "./ui.js";
import { installVersions, setHeadActions } from "./versions.js";
import { setStartNew } from "./view.js";

// The session opened first: the one the address names, else the one the server says (the newest
// that no other Retrace holds), else none until the first prompt starts one.
async function start() {
  setCompactButton();
  const wanted = new URL(location.href).searchParams.get("session");
  const [list, ws] = await Promise.all([loadSessions(wanted), loadHeader()]);
  const id = wanted ?? ws.session;
  if (id) await openSession(id);
  else if (list.length > 0) ui.rows.replaceChildren(transcriptEmpty("This workspace's sessions are open in another Retrace: type a prompt below to start a new one here."));
  else ui.rows.replaceChildren(transcriptEmpty("No session yet: type a prompt below to start one."));
}

setTurnActions(runTurnAction);
setHeadActions(HEAD_ACTIONS);
setFileHistory((path, opener) => attempt(() => openHistory(path, opener)));
setStartWith((model) => newSession(false, model));
setStartNew(() => newSession());
setStartWithBackend((backend) => attempt(() => newSession(true, undefined, backend)));
installHeader();
installDialog();
installHistory();
installComposer();
installVersions();
attempt(start);
