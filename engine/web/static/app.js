// Cardinal browser board: play and analyse against the engine; watch a match.
import { Board } from "./board.js";
import { numberMoves } from "./notation.js";
import { pieceSVG } from "./pieces.js";
import { startWatch } from "./watch.js";

const $ = (id) => document.getElementById(id);
const app = {
  id: null, ws: null, state: null, variants: {}, viewPly: 0, preview: null,
  analysing: false, lines: {}, lastInfo: null, clockBase: null, pendingClick: null,
  fenEdited: false, fenSent: false,
};
window.cardinal = app;              // for tests and the console
window.cardinalTiming = [];         // move round trips: {roundTripMs, engineMs}

const board = new Board($("board"), { onMove: onBoardMove });
board.canMove = () => canMove();

function showMessage(text, kind = "error") {
  const m = $("message");
  if (!text) { m.hidden = true; m.textContent = ""; return; }
  m.hidden = false; m.textContent = text; m.className = kind === "info" ? "info" : "";
}

function limitsFromForm() {
  const kind = $("limit-kind").value;
  if (kind === "depth") return { kind, depth: parseInt($("depth").value, 10) };
  if (kind === "clock") return { kind, base: parseFloat($("base").value) * 60, inc: parseFloat($("inc").value) };
  return { kind, movetime: parseInt($("movetime").value, 10) };
}

async function api(path, body) {
  const res = await fetch(path, body === undefined ? {} : {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  const text = await res.text();
  let data = null;
  try { data = JSON.parse(text); } catch { data = text; }
  if (!res.ok) throw new Error((data && data.error) || `HTTP ${res.status}`);
  return data;
}

async function newGame(opts = {}) {
  showMessage("");
  const body = { variant: $("variant").value, human: $("side").value, limits: limitsFromForm(),
    skill: parseInt($("skill").value, 10), ...opts };
  try {
    const res = await api("/api/games", body);
    connect(res.id, res.state);
  } catch (e) { showMessage(e.message); }
}

function connect(id, state) {
  if (app.ws) { app.ws.onclose = null; app.ws.close(); }
  app.id = id; app.lines = {}; app.preview = null;
  $("status").dataset.engine = "none";
  if (state) applyState(state);
  const ws = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws/game/${id}`);
  app.ws = ws;
  ws.onmessage = (ev) => onMessage(JSON.parse(ev.data));
  ws.onclose = () => { if (app.ws === ws) showMessage("connection to the server lost; reload the page"); };
  ws.onopen = () => { if (app.analysing) send({ type: "analyse", on: true, multipv: +$("multipv").value }); };
}

function send(msg) {
  if (!app.ws || app.ws.readyState !== 1) { showMessage("not connected"); return false; }
  app.ws.send(JSON.stringify(msg)); return true;
}

function onMessage(msg) {
  switch (msg.type) {
    case "state": {
      const before = app.state;
      applyState(msg.state);
      if (msg.engine_move && app.pendingClick !== null) {
        const shown = performance.now();
        window.cardinalTiming.push({ roundTripMs: shown - app.pendingClick, engineMs: msg.engine_ms });
        app.pendingClick = null;
      }
      if (!msg.engine_move && before && before.version !== msg.state.version) showMessage("");
      break;
    }
    case "error":
      showMessage(msg.message);
      if (msg.state) applyState(msg.state);
      // a rejected FEN stays in the box, marked, with the reason under it, to be corrected
      if (app.fenSent && app.fenEdited) fenError(msg.message);
      app.fenSent = false;
      app.pendingClick = null;
      break;
    case "info": onInfo(msg); break;
    case "thinking": if (msg.kind === "analyse") { app.lines = {}; renderLines(); } break;
    case "analysis":
      app.analysing = msg.on;
      $("btn-analyse").setAttribute("aria-pressed", String(msg.on));
      if (!msg.on) { app.lines = {}; renderLines(); }
      break;
    case "engine_died": showMessage(msg.message, "info"); $("status").dataset.engine = "died"; break;
    case "engine_ready":
      $("status").dataset.engine = "ready"; $("status").dataset.pid = msg.pid;
      if ($("message").textContent.includes("engines are busy")) showMessage("");
      break;
    case "promotions": break;
  }
}

function sideName(t) { return t === "w" ? "White" : "Black"; }

function applyState(st) {
  const prev = app.state;
  app.state = st;
  const v = app.variants[st.variant];
  board.setSize(v.width, v.height);
  board.names = Object.fromEntries(v.pieces.map((p) => [p.letter, p.name]));
  if (!prev || prev.version !== st.version || prev.moves.length !== st.moves.length) {
    app.viewPly = st.moves.length; app.preview = null;
  }
  app.clockBase = st.clocks ? { clocks: st.clocks, at: performance.now(), turn: st.turn, over: !!st.result } : null;
  // the FEN box follows the position, but text typed in it stays until the position changes
  if (!app.fenEdited || !prev || prev.version !== st.version) {
    $("fen").value = st.fen; app.fenEdited = false; fenError(null);
  }
  if ($("variant").value !== st.variant) $("variant").value = st.variant;
  if ($("side").value !== st.human) $("side").value = st.human;
  renderBoard(); renderMoves(); renderStatus(); renderPlayers(); renderClocks();
}

function canMove() {
  const st = app.state;
  if (!st || st.result || app.preview || app.viewPly !== st.moves.length) return false;
  const side = st.turn === "w" ? "white" : "black";
  return st.human === "both" || st.human === side;
}

function renderBoard() {
  const st = app.state;
  if (!st) return;
  if (app.preview) {
    board.setPosition(app.preview.fen, { legal: [], lastMove: app.preview.last });
    $("preview-note").hidden = false;
    return;
  }
  $("preview-note").hidden = true;
  const ply = app.viewPly;
  const uci = ply > 0 ? st.ucis[ply - 1] : null;
  const last = uci ? { from: uci.match(/^[a-j]\d+/)[0], to: uci.slice(uci.match(/^[a-j]\d+/)[0].length).match(/^[a-j]\d+/)[0] } : null;
  const live = ply === st.moves.length;
  board.setPosition(st.fens[ply], { legal: live ? st.legal : [], lastMove: last, check: live && st.check });
  $("board").dataset.ply = ply;
}

function renderMoves() {
  const st = app.state, el = $("movelist");
  el.innerHTML = "";
  for (const { ply, san, num } of numberMoves(st.start_fen, st.moves)) {
    if (num) {
      const n = document.createElement("span");
      n.className = "num"; n.textContent = num;
      el.appendChild(n);
    }
    const s = document.createElement("span");
    s.className = "mv" + (ply === app.viewPly ? " current" : "");
    s.dataset.ply = ply; s.textContent = san;
    el.appendChild(s); el.appendChild(document.createTextNode(" "));
  }
  if (st.result) {
    const r = document.createElement("span"); r.className = "result"; r.textContent = " " + st.result;
    el.appendChild(r);
  }
  el.querySelector(".mv.current")?.scrollIntoView({ block: "nearest" });
}

function renderStatus() {
  const st = app.state, el = $("status");
  el.classList.toggle("over", !!st.result);
  el.dataset.status = st.status; el.dataset.result = st.result || "";
  let text;
  if (st.status === "checkmate") text = `Checkmate: ${st.turn === "w" ? "Black" : "White"} wins (${st.result})`;
  else if (st.result) text = `${st.reason} (${st.result})`;
  else {
    text = `${sideName(st.turn)} to move` + (st.check ? ", check" : "");
    if (!canMove() && app.viewPly === st.moves.length && st.human !== "both") text += " (Cardinal is thinking)";
  }
  if (app.viewPly !== st.moves.length) text += ` (viewing ply ${app.viewPly} of ${st.moves.length})`;
  el.textContent = text;
}

function renderPlayers() {
  const st = app.state;
  const top = board.flipped ? "white" : "black", bottom = board.flipped ? "black" : "white";
  $("top-name").textContent = st[top]; $("bottom-name").textContent = st[bottom];
}

function fmtClock(s) {
  s = Math.max(0, s);
  const m = Math.floor(s / 60), sec = s - m * 60;
  return s < 10 ? `${m}:${sec.toFixed(1).padStart(4, "0")}` : `${m}:${String(Math.floor(sec)).padStart(2, "0")}`;
}

function renderClocks() {
  const cb = app.clockBase;
  for (const [pos, color] of [["top", board.flipped ? 0 : 1], ["bottom", board.flipped ? 1 : 0]]) {
    const el = $(`${pos}-clock`);
    if (!cb) { el.textContent = ""; el.className = "clock"; continue; }
    const running = !cb.over && (cb.turn === "w" ? 0 : 1) === color;
    const left = cb.clocks[color] - (running ? (performance.now() - cb.at) / 1000 : 0);
    el.textContent = fmtClock(left);
    el.className = "clock" + (running ? " running" : "") + (left < 10 ? " low" : "");
  }
}
setInterval(renderClocks, 100);

function onBoardMove(from, to, cands) {
  if (cands.length === 1) return playMove(cands[0].uci);
  openPromotion(cands);
}

function playMove(uci) {
  app.pendingClick = performance.now();
  send({ type: "move", uci });
}

function openPromotion(cands) {
  const dlg = $("promo-dialog"), box = $("promo-choices");
  box.innerHTML = "";
  const white = app.state.turn === "w";
  for (const m of cands) {
    const b = document.createElement("button");
    b.className = "promo-choice" + (m.promo ? "" : " stay");
    b.dataset.promo = m.promo || "";
    if (m.promo) {
      const letter = white ? m.promo.toUpperCase() : m.promo;
      b.innerHTML = pieceSVG(letter); b.title = m.san;
    } else { b.textContent = `stay a pawn (${m.san})`; }
    b.addEventListener("click", () => { dlg.close(); playMove(m.uci); });
    box.appendChild(b);
  }
  dlg.showModal();
}
$("promo-cancel").addEventListener("click", () => $("promo-dialog").close());

// ---------------------------------------------------------------- analysis
function scoreText(sc) {
  if (!sc) return "-";
  if (sc.kind === "mate") return (sc.white > 0 ? "#" : "#-") + Math.abs(sc.value);
  const v = sc.white / 100;
  return (v > 0 ? "+" : "") + v.toFixed(2);
}

function onInfo(msg) {
  if (!app.state || msg.ply !== app.state.moves.length) return;
  app.lines[msg.multipv] = msg;
  if (msg.multipv === 1) {
    $("an-depth").textContent = msg.depth ?? "-";
    $("an-nodes").textContent = msg.nodes ?? "-";
    $("an-nps").textContent = msg.nps ?? "-";
    $("an-score").textContent = scoreText(msg.score);
    evalBar(msg.score);
  }
  renderLines();
}

function evalBar(sc) {
  let p = 50;
  if (sc) p = sc.kind === "mate" ? (sc.white > 0 ? 100 : 0) : 50 + 50 * Math.tanh(sc.white / 500);
  $("evalbar-fill").style.height = p.toFixed(1) + "%";
  $("evalbar").dataset.score = sc ? scoreText(sc) : "";
  $("evalbar-text").textContent = sc ? scoreText(sc) : "";
}

function renderLines() {
  const el = $("pv-lines");
  el.innerHTML = "";
  for (const k of Object.keys(app.lines).map(Number).sort((a, b) => a - b)) {
    const L = app.lines[k];
    const line = document.createElement("div");
    line.className = "pv-line"; line.dataset.multipv = k;
    const s = document.createElement("span"); s.className = "pv-score"; s.textContent = scoreText(L.score);
    line.appendChild(s);
    L.pv_san.forEach((san, i) => {
      const m = document.createElement("span");
      m.className = "pv-move"; m.dataset.idx = i; m.textContent = san;
      m.addEventListener("click", () => previewPv(L, i));
      line.appendChild(m); line.appendChild(document.createTextNode(" "));
    });
    el.appendChild(line);
  }
}

function previewPv(L, i) {
  const fen = L.pv_fens?.[i];
  if (!fen) return;
  const u = L.pv[i];
  const from = u.match(/^[a-j]\d+/)[0];
  app.preview = { fen, last: { from, to: u.slice(from.length).match(/^[a-j]\d+/)[0] } };
  renderBoard(); renderStatus();
}
$("btn-preview-exit").addEventListener("click", () => { app.preview = null; renderBoard(); renderStatus(); });

// ---------------------------------------------------------------- navigation & buttons
function goPly(p) {
  if (!app.state) return;
  app.preview = null;
  app.viewPly = Math.max(0, Math.min(app.state.moves.length, p));
  board.select(null); renderBoard(); renderMoves(); renderStatus();
}
$("nav-first").addEventListener("click", () => goPly(0));
$("nav-prev").addEventListener("click", () => goPly(app.viewPly - 1));
$("nav-next").addEventListener("click", () => goPly(app.viewPly + 1));
$("nav-last").addEventListener("click", () => goPly(Infinity));
$("movelist").addEventListener("click", (e) => { const t = e.target.closest(".mv"); if (t) goPly(+t.dataset.ply); });
document.addEventListener("keydown", (e) => {
  if (e.target.matches("input, textarea, select") || document.body.dataset.mode === "watch") return;
  if (e.key === "ArrowLeft") goPly(app.viewPly - 1);
  else if (e.key === "ArrowRight") goPly(app.viewPly + 1);
  else if (e.key === "Escape" && app.preview) { app.preview = null; renderBoard(); }
});

$("btn-new").addEventListener("click", () => newGame());
$("btn-flip").addEventListener("click", () => { board.flip(); renderBoard(); renderPlayers(); renderClocks(); });
$("btn-takeback").addEventListener("click", () => {
  const st = app.state; if (!st) return;
  // against the engine, take back the engine's reply too
  const plies = (st.human === "white" || st.human === "black") && st.moves.length >= 2 &&
    (st.turn === "w" ? "white" : "black") === st.human ? 2 : 1;
  send({ type: "takeback", plies });
});
$("btn-resign").addEventListener("click", () => send({ type: "resign" }));
$("btn-analyse").addEventListener("click", () => {
  send({ type: "analyse", on: !app.analysing, multipv: +$("multipv").value });
});
$("multipv").addEventListener("change", () => { if (app.analysing) send({ type: "analyse", on: true, multipv: +$("multipv").value }); });
function fenError(text) {
  const box = $("fen"), note = $("fen-error");
  if (text) { box.setAttribute("aria-invalid", "true"); note.textContent = text; note.hidden = false; }
  else { box.removeAttribute("aria-invalid"); note.textContent = ""; note.hidden = true; }
}
function submitFen() { app.fenSent = send({ type: "fen", fen: $("fen").value }); }
$("fen").addEventListener("input", () => { app.fenEdited = true; });
$("btn-fen").addEventListener("click", submitFen);
$("fen").addEventListener("keydown", (e) => { if (e.key === "Enter") submitFen(); });
$("btn-pgn-load").addEventListener("click", () => send({ type: "pgn", pgn: $("pgn").value, human: "both" }));
$("btn-pgn-export").addEventListener("click", async () => {
  try {
    const text = await api(`/api/games/${app.id}/pgn`);
    $("pgn").value = text;
    const a = $("pgn-download");
    a.href = URL.createObjectURL(new Blob([text], { type: "application/x-chess-pgn" })); a.hidden = false;
  } catch (e) { showMessage(e.message); }
});
$("limit-kind").addEventListener("change", () => {
  for (const el of document.querySelectorAll(".lim")) el.hidden = !el.classList.contains("lim-" + $("limit-kind").value);
});
// Side and engine limit also apply to the game on the board (e.g. let Cardinal take over a loaded PGN).
$("side").addEventListener("change", () => { if (app.state) send({ type: "settings", human: $("side").value }); });
for (const id of ["limit-kind", "movetime", "depth", "base", "inc"]) {
  $(id).addEventListener("change", () => {
    if (app.state && $("limit-kind").value !== "clock") send({ type: "settings", limits: limitsFromForm() });
  });
}

// ---------------------------------------------------------------- modes
function setMode(mode) {
  document.body.dataset.mode = mode;
  for (const t of document.querySelectorAll(".tab")) t.classList.toggle("active", t.dataset.mode === mode);
  $("game-view").hidden = mode === "watch";
  $("watch-view").hidden = mode !== "watch";
  if (mode === "analyse" && app.state) {
    send({ type: "settings", human: "both" });
    if (!app.analysing) send({ type: "analyse", on: true, multipv: +$("multipv").value });
  }
}
for (const t of document.querySelectorAll(".tab")) t.addEventListener("click", () => setMode(t.dataset.mode));
$("btn-watch").addEventListener("click", () => startWatch($("watch-path").value.trim()));

for (let i = 20; i >= 0; i--) {
  const o = document.createElement("option");
  o.value = i; o.textContent = i === 20 ? "20 (full)" : String(i);
  $("skill").appendChild(o);
}

// Leaving the page (also into the back-forward cache) closes its connection, so the
// server stops this game's engine at once.
window.addEventListener("pagehide", () => {
  if (app.ws) { app.ws.onclose = null; app.ws.close(); app.ws = null; }
});
window.addEventListener("pageshow", (e) => { if (e.persisted && app.id) connect(app.id); });

async function init() {
  try {
    const res = await api("/api/variants");
    for (const v of res.variants) {
      app.variants[v.name] = v;
      const o = document.createElement("option"); o.value = v.name; o.textContent = v.name;
      $("variant").appendChild(o);
    }
    if (res.watch) $("watch-path").value = res.watch;
    const params = new URLSearchParams(location.search);
    if (params.get("variant")) $("variant").value = params.get("variant");
    if (params.get("side")) $("side").value = params.get("side");
    if (params.get("mode") === "watch") { setMode("watch"); if (res.watch) startWatch(res.watch); }
    await newGame(params.get("fen") ? { fen: params.get("fen") } : {});
    document.body.dataset.ready = "1";
  } catch (e) { showMessage(e.message); }
}
init();
