// Piece drawings for the Cardinal board (drawn for this project), 100x100 SVG.
// Marshal (C) = a knight in front of a rook, cardinal (A) = a bishop in front of a knight:
// outlines of their own, told apart from the rook and bishop and from each other at phone size.

const KNIGHT = "M30 86 L74 86 L72 70 C72 54 80 44 75 30 C71 18 59 11 46 13 L41 6 L36 15 " +
  "C27 19 21 30 19 40 L15 53 C14 59 20 62 26 59 L33 53 C38 53 42 50 46 46 C46 57 37 64 31 72 Z";
const ROOK = "M24 88 L76 88 L76 80 L70 76 L67 44 L74 38 L74 18 L64 18 L64 26 L56 26 L56 18 L44 18 " +
  "L44 26 L36 26 L36 18 L26 18 L26 38 L33 44 L30 76 L24 80 Z";
const BISHOP = "M24 88 L76 88 L76 81 L62 78 C72 70 74 58 68 46 C64 37 56 29 50 24 C44 29 36 37 32 46 " +
  "C26 58 28 70 38 78 L24 81 Z";
const PAWN = "M26 88 L74 88 L74 82 C74 74 62 68 60 56 L64 52 L58 48 C64 44 66 38 64 32 " +
  "C62 24 56 20 50 20 C44 20 38 24 36 32 C34 38 36 44 42 48 L36 52 L40 56 C38 68 26 74 26 82 Z";
const QUEEN = "M24 88 L76 88 L76 80 L70 76 L80 34 L66 56 L62 26 L52 54 L50 22 L48 54 L38 26 L34 56 " +
  "L20 34 L30 76 L24 80 Z";
const KING = "M24 88 L76 88 L76 80 L70 76 C78 62 84 48 72 40 C64 35 56 40 50 48 C44 40 36 35 28 40 " +
  "C16 48 22 62 30 76 L24 80 Z M46 36 L46 28 L40 28 L40 22 L46 22 L46 14 L54 14 L54 22 L60 22 L60 28 " +
  "L54 28 L54 36 Z";

const SHAPES = {
  P: [PAWN], N: [KNIGHT], B: [BISHOP], R: [ROOK], Q: [QUEEN], K: [KING],
  C: [], A: [],
};
const KNIGHT_EYE = (c) => `<circle cx="50" cy="28" r="3.5" fill="${c}"/>`;
const BISHOP_MARKS = (c) => `<path d="M50 36 L57 50" stroke="${c}" stroke-width="4" fill="none"/><circle cx="50" cy="20" r="5" fill="inherit"/>`;

// One piece of a compound, scaled by s about the origin and moved by (x, y); its outline
// keeps the width of the others'.
const part = (d, x, y, s, extra = "") =>
  `<g transform="translate(${x} ${y}) scale(${s})" stroke-width="${(3.5 / s).toFixed(2)}"><path d="${d}"/>${extra}</g>`;

const EXTRA = {
  N: KNIGHT_EYE,
  B: BISHOP_MARKS,
  Q: (c) => `<circle cx="20" cy="32" r="5"/><circle cx="38" cy="24" r="5"/><circle cx="50" cy="19" r="5"/><circle cx="62" cy="24" r="5"/><circle cx="80" cy="32" r="5"/>`,
  // Both halves stand on the base line. Marshal: the knight at the left, in front of the rook
  // at the right; cardinal the other way round: the bishop at the left, in front of the knight
  // at the right, so the two differ in outline as a whole, not only in the smaller half.
  C: (c) => part(ROOK, 32, 14, 0.84) + part(KNIGHT, -8, 15.8, 0.84, KNIGHT_EYE(c)),
  A: (c) => part(KNIGHT, 28.8, 15.8, 0.84, KNIGHT_EYE(c)) + part(BISHOP, -16, 14, 0.84, BISHOP_MARKS(c)),
};

export const PIECE_NAMES = {P: "pawn", N: "knight", B: "bishop", R: "rook", Q: "queen", K: "king",
  C: "marshal", A: "cardinal"};

export function pieceSVG(letter) {
  const white = letter === letter.toUpperCase();
  const t = letter.toUpperCase();
  const fill = white ? "#fbfaf5" : "#26231f";
  const line = white ? "#26231f" : "#f0ece0";
  const paths = (SHAPES[t] || [PAWN]).map((d) => `<path d="${d}"/>`).join("");
  const extra = EXTRA[t] ? EXTRA[t](line) : "";
  return `<svg viewBox="0 0 100 100" xmlns="http://www.w3.org/2000/svg" aria-hidden="true">` +
    `<g fill="${fill}" stroke="${line}" stroke-width="3.5" stroke-linejoin="round">${paths}${extra}</g></svg>`;
}
