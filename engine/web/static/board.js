// Board rendering and input (click or drag). Squares are div.sq[data-sq="e4"],
// pieces div.piece[data-piece="wQ"].
import { pieceSVG, PIECE_NAMES } from "./pieces.js";

const FILES = "abcdefghij";

export function parseFenBoard(fen, width, height) {
  const rows = fen.split(" ")[0].split("/");
  const out = {};
  rows.forEach((row, i) => {
    const rank = height - i;
    let f = 0;
    const re = /(\d+)|([A-Za-z])/g;
    let m;
    while ((m = re.exec(row))) {
      if (m[1]) f += parseInt(m[1], 10);
      else { out[FILES[f] + rank] = m[2]; f++; }
    }
  });
  return out;
}

export class Board {
  constructor(el, { interactive = true, onMove = null } = {}) {
    this.el = el; this.interactive = interactive; this.onMove = onMove;
    this.width = 8; this.height = 8; this.flipped = false;
    this.pieces = {}; this.legal = []; this.selected = null; this.lastMove = null;
    this.canMove = () => false;
    if (interactive) this._bindInput();
  }

  setSize(width, height) {
    if (width === this.width && height === this.height && this.el.childElementCount) return;
    this.width = width; this.height = height; this._build();
  }

  flip() { this.flipped = !this.flipped; this._build(); this.draw(); }

  _build() {
    const el = this.el;
    el.innerHTML = "";
    el.style.setProperty("--files", this.width);
    el.style.setProperty("--ranks", this.height);
    el.dataset.files = this.width; el.dataset.ranks = this.height;
    for (let r = 0; r < this.height; r++) {
      for (let c = 0; c < this.width; c++) {
        const file = this.flipped ? this.width - 1 - c : c;
        const rank = this.flipped ? r + 1 : this.height - r;
        const sq = document.createElement("div");
        const name = FILES[file] + rank;
        sq.className = "sq " + ((file + rank) % 2 === 0 ? "light" : "dark");
        sq.dataset.sq = name;
        // coordinates sit outside the board, left of the first file and below the last rank,
        // so they never cover a piece, however small the squares
        if (c === 0) {
          const n = document.createElement("span");
          n.className = "coord-rank"; n.textContent = rank;
          sq.appendChild(n);
        }
        if (r === this.height - 1) {
          const f = document.createElement("span");
          f.className = "coord-file"; f.textContent = FILES[file];
          sq.appendChild(f);
        }
        el.appendChild(sq);
      }
    }
  }

  setPosition(fen, { legal = [], lastMove = null, check = false } = {}) {
    this.pieces = parseFenBoard(fen, this.width, this.height);
    this.legal = legal; this.lastMove = lastMove;
    const king = fen.split(" ")[1] === "b" ? "k" : "K";
    this.checkSq = check ? Object.keys(this.pieces).find((s) => this.pieces[s] === king) : null;
    if (this.selected && !legal.some((m) => m.from === this.selected)) this.selected = null;
    this.draw();
  }

  square(name) { return this.el.querySelector(`.sq[data-sq="${name}"]`); }

  draw() {
    for (const sq of this.el.children) {
      const name = sq.dataset.sq;
      const p = this.pieces[name];
      let pieceEl = sq.querySelector(".piece");
      if (p) {
        const code = (p === p.toUpperCase() ? "w" : "b") + p.toUpperCase();
        if (!pieceEl || pieceEl.dataset.piece !== code) {
          if (pieceEl) pieceEl.remove();
          pieceEl = document.createElement("div");
          pieceEl.className = "piece";
          pieceEl.dataset.piece = code;
          const names = this.names || PIECE_NAMES;
          pieceEl.title = (code[0] === "w" ? "white " : "black ") + (names[code[1]] || code[1]);
          pieceEl.innerHTML = pieceSVG(p);
          sq.appendChild(pieceEl);
        }
      } else if (pieceEl) pieceEl.remove();
      sq.classList.remove("selected", "dest", "capture", "relay", "last", "check");
      if (name === this.checkSq) sq.classList.add("check");
      if (this.lastMove && (this.lastMove.from === name || this.lastMove.to === name)) sq.classList.add("last");
    }
    if (this.selected) {
      this.square(this.selected)?.classList.add("selected");
      for (const m of this.legal) {
        if (m.from !== this.selected) continue;
        const s = this.square(m.to);
        if (!s) continue;
        s.classList.add("dest");
        if (m.capture) s.classList.add("capture");
        if (m.relay) s.classList.add("relay");
      }
    }
  }

  select(name) {
    this.selected = name && this.legal.some((m) => m.from === name) ? name : null;
    this.draw();
  }

  _tryMove(from, to) {
    const cands = this.legal.filter((m) => m.from === from && m.to === to);
    this.selected = null; this.draw();
    if (cands.length && this.onMove) this.onMove(from, to, cands);
    return cands.length > 0;
  }

  _bindInput() {
    let drag = null;
    const sqAt = (x, y) => document.elementFromPoint(x, y)?.closest?.(".sq");
    this.el.addEventListener("pointerdown", (ev) => {
      if (ev.button !== 0 || !this.canMove()) return;
      const sq = ev.target.closest(".sq");
      if (!sq) return;
      const name = sq.dataset.sq;
      if (this.selected && this.selected !== name && this.legal.some((m) => m.from === this.selected && m.to === name)) {
        this._tryMove(this.selected, name);
        ev.preventDefault();
        return;
      }
      if (this.legal.some((m) => m.from === name)) {
        this.select(name);
        const piece = sq.querySelector(".piece");
        if (piece) {
          drag = { from: name, piece, x0: ev.clientX, y0: ev.clientY, moved: false, id: ev.pointerId };
        }
        ev.preventDefault();
      } else {
        this.select(null);
      }
    });
    window.addEventListener("pointermove", (ev) => {
      if (!drag || ev.pointerId !== drag.id) return;
      const dx = ev.clientX - drag.x0, dy = ev.clientY - drag.y0;
      if (!drag.moved && Math.hypot(dx, dy) < 4) return;
      drag.moved = true;
      drag.piece.classList.add("dragging");
      drag.piece.style.transform = `translate(${dx}px, ${dy}px)`;
    });
    window.addEventListener("pointerup", (ev) => {
      if (!drag || ev.pointerId !== drag.id) return;
      const d = drag; drag = null;
      d.piece.classList.remove("dragging");
      d.piece.style.transform = "";
      if (!d.moved) return;
      const target = sqAt(ev.clientX, ev.clientY);
      if (target && target.dataset.sq !== d.from) this._tryMove(d.from, target.dataset.sq);
    });
  }
}
