// Move numbers for a list of SAN moves, from the start FEN's side to move and fullmove
// number: "1. e4 e5 2. Nf3", or "1... d7 2. Qxj8" when Black moves first. Used by the
// Play/Analyse move list and the Watch page.

// [{ply, san, num}] with num the move number to show before the move ("12." or "12...") or null.
export function numberMoves(startFen, moves) {
  const [, turn, , , , full] = (startFen || "").split(" ");
  let num = parseInt(full, 10) || 1, black = turn === "b";
  return moves.map((san, i) => {
    const label = !black ? `${num}.` : i === 0 ? `${num}...` : null;
    if (black) num++;
    black = !black;
    return { ply: i + 1, san, num: label };
  });
}

// The same as one line of text: "1... d7 2. Qxj8".
export function movesText(startFen, moves) {
  return numberMoves(startFen, moves).map((m) => (m.num ? `${m.num} ` : "") + m.san).join(" ");
}
