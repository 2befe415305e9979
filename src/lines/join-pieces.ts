// A line that spans reads is kept as pieces and joined once, when its end arrives: joining on
// every read would copy it again each time (quadratic in the line's length).

/** The pieces as one array: the piece itself when there is one, else a single copy of all. */
export function joinPieces(pieces: readonly Uint8Array[]): Uint8Array {
  if (pieces.length === 1) return pieces[0];
  let total = 0;
  for (const piece of pieces) total += piece.length;
  const out = new Uint8Array(total);
  let at = 0;
  for (const piece of pieces) {
    out.set(piece, at);
    at += piece.length;
  }
  return out;
}
