// Watch mode: follow a running match PGN over /ws/watch and plot Elo (and LLR) per game.
import { Board } from "./board.js";
import { movesText } from "./notation.js";

const $ = (id) => document.getElementById(id);
const wboard = new Board($("watch-board"), { interactive: false });
let ws = null;

window.addEventListener("pagehide", () => { if (ws) { ws.onclose = null; ws.close(); ws = null; } });

export function startWatch(path) {
  if (ws) { ws.onclose = null; ws.close(); }
  const q = new URLSearchParams(path ? { path } : {});
  ws = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws/watch?${q}`);
  ws.onmessage = (ev) => {
    const msg = JSON.parse(ev.data);
    if (msg.type === "error") { $("message").hidden = false; $("message").textContent = msg.message; return; }
    render(msg);
  };
}

function render(m) {
  $("watch-games").textContent = m.games;
  document.body.dataset.watchGames = m.games;
  if (m.waiting) { $("watch-players").textContent = `waiting for ${m.path}`; plot([]); return; }
  $("watch-score").textContent = `${m.wins}-${m.draws}-${m.losses}`;
  $("watch-points").textContent = `${m.wins + m.draws / 2}/${m.games}`;
  $("watch-first").textContent = m.first;
  $("watch-elo").textContent = m.elo === null ? "-" :
    `${m.elo > 0 ? "+" : ""}${m.elo} ± ${m.error_infinite ? "∞" : m.error}`;
  $("watch-journal").textContent = m.journal_path ? `${m.journal} lines` : "none";
  const c = m.current;
  if (c) {
    $("watch-players").textContent = `Round ${c.round}: ${c.white} - ${c.black} ${c.result}`;
    wboard.setSize(c.width, c.height);
    if (c.fen) wboard.setPosition(c.fen);
    $("watch-moves").textContent = movesText(c.start_fen, c.moves) + (c.error ? ` (${c.error})` : "");
  }
  plot(m.series);
}

function plot(series) {
  const svg = $("watch-plot");
  const W = 400, H = 200, P = 24;
  const elos = series.filter((p) => p.elo_plot !== null);
  const span = Math.max(100, ...elos.map((p) => Math.min(800, Math.abs(p.elo_plot) + Math.min(p.error ?? 0, 400))));
  const n = Math.max(2, series.length);
  const x = (i) => P + (W - 2 * P) * (i / (n - 1 || 1));
  const y = (e) => H / 2 - (H / 2 - P / 2) * (e / span);
  const pts = series.map((p, i) => p.elo_plot === null ? null : `${x(i).toFixed(1)},${y(p.elo_plot).toFixed(1)}`).filter(Boolean);
  const band = series.map((p, i) => p.elo === null || p.error === null ? null : [x(i), y(p.elo + Math.min(p.error, span)), y(p.elo - Math.min(p.error, span))]).filter(Boolean);
  const llr = series.filter((p) => p.llr !== null && p.llr !== undefined);
  const lspan = Math.max(3, ...llr.map((p) => Math.abs(p.llr)));
  const lpts = series.map((p, i) => p.llr === null || p.llr === undefined ? null : `${x(i).toFixed(1)},${(H / 2 - (H / 2 - P / 2) * p.llr / lspan).toFixed(1)}`).filter(Boolean);
  const bandPath = band.length ? "M" + band.map((b) => `${b[0].toFixed(1)},${b[1].toFixed(1)}`).join(" L") +
    " L" + band.slice().reverse().map((b) => `${b[0].toFixed(1)},${b[2].toFixed(1)}`).join(" L") + " Z" : "";
  svg.innerHTML =
    `<line x1="${P}" x2="${W - P}" y1="${H / 2}" y2="${H / 2}" stroke="#bbb"/>` +
    `<text x="2" y="12" font-size="10" fill="#666">+${Math.round(span)}</text>` +
    `<text x="2" y="${H - 4}" font-size="10" fill="#666">-${Math.round(span)}</text>` +
    `<text x="${W - P}" y="${H - 4}" font-size="10" fill="#666" text-anchor="end">${series.length} games</text>` +
    (bandPath ? `<path id="plot-band" d="${bandPath}" fill="rgba(47,111,179,.15)" stroke="none"/>` : "") +
    `<polyline id="plot-elo" data-points="${pts.length}" points="${pts.join(" ")}" fill="none" stroke="#2f6fb3" stroke-width="2"/>` +
    `<polyline id="plot-llr" data-points="${lpts.length}" points="${lpts.join(" ")}" fill="none" stroke="#b3462f" stroke-width="2" stroke-dasharray="4 3"/>` +
    pts.map((p) => `<circle cx="${p.split(",")[0]}" cy="${p.split(",")[1]}" r="2.5" fill="#2f6fb3"/>`).join("");
}
