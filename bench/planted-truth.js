// The truth of bench/gen-clusters.js's near copies, from the word indices it plants (the text is
// "w<index>" words joined by spaces, so these shingles are exactly bench/near-dup-corpus.js's
// shingleSet of the text): exact Jaccard of word 3-shingles for every copy against its original
// and against the earlier copies of the same original, and the copies that a first-kept dedup at
// THRESHOLD removes (a copy is removed when it is within THRESHOLD of an earlier kept record:
// its original, always kept, or an earlier kept copy). Distinct pages share no 3-shingle that
// matters (150 words from 20,000), so no other pair comes near.
// File lines: "P a b J" (a < b; copy-original pairs, and copy-copy pairs at J >= 0.5), "R id"
// (a copy the truth removes). usage: imported by bench/gen-clusters.js; readPlanted(file) here.
import { closeSync, openSync, readFileSync, writeSync } from "node:fs";

/** The word 3-shingles of a page of word indices (< 20,000), as numbers. */
function shingles(words) {
  const set = new Set();
  for (let i = 0; i + 3 <= words.length; i++) set.add(words[i] * 4e8 + words[i + 1] * 2e4 + words[i + 2]);
  return set;
}

function jaccard(a, b) {
  let common = 0;
  for (const s of a) if (b.has(s)) common++;
  return common / (a.size + b.size - common);
}

export class PlantedTruth {
  constructor(file, threshold) {
    this.fd = openSync(file, "w");
    this.threshold = threshold;
    this.copies = new Map(); // original id -> [{ id, words, kept }] (words: sets would not fit at 1e7)
    this.lines = [];
  }

  /** A near copy `id` of the page `of`, both as word indices. */
  copy(id, of, original, words) {
    const set = shingles(words);
    const j = jaccard(set, shingles(original));
    this.lines.push(`P ${of} ${id} ${j.toFixed(6)}\n`);
    let removed = j >= this.threshold;
    const siblings = this.copies.get(of) ?? [];
    for (const sibling of siblings) {
      const js = jaccard(set, shingles(sibling.words));
      if (js >= 0.5) this.lines.push(`P ${sibling.id} ${id} ${js.toFixed(6)}\n`);
      if (sibling.kept && js >= this.threshold) removed = true;
    }
    siblings.push({ id, words, kept: !removed });
    this.copies.set(of, siblings);
    if (removed) this.lines.push(`R ${id}\n`);
    if (this.lines.length > 65536) this.flush();
  }

  flush() {
    writeSync(this.fd, this.lines.join(""));
    this.lines = [];
  }

  close() {
    this.flush();
    closeSync(this.fd);
  }
}

/** Reads a planted file: { pairs: [[a, b, J]], removed: Set of ids }. */
export function readPlanted(file) {
  const pairs = [];
  const removed = new Set();
  for (const line of readFileSync(file, "latin1").split("\n")) {
    if (line[0] === "P") {
      const [, a, b, j] = line.split(" ");
      pairs.push([Number(a), Number(b), Number(j)]);
    } else if (line[0] === "R") removed.add(Number(line.slice(2)));
  }
  return { pairs, removed };
}
