// Groups of near-duplicates without chaining: every member of a group is within the threshold
// of the group's representative, so (Jaccard distance being a metric) no two members are further
// apart than twice the threshold's distance. Connected components would instead join A to Z
// through a chain of pairs each similar, whatever A and Z share.

/** A pair of document ids with a score (similarity, or anything where larger is closer). */
export interface ScoredPair {
  readonly a: number;
  readonly b: number;
  readonly similarity: number;
}

/** A group: its representative and the members (the representative first, with similarity 1). */
export interface SimilarGroup {
  readonly representative: number;
  readonly members: readonly { readonly id: number; readonly similarity: number }[];
}

/**
 * Star groups from pairs: documents are taken by number of pairs (most first, then smaller id);
 * each document not yet grouped becomes a representative of those of its partners not yet
 * grouped. A document whose partners were all grouped elsewhere, none as representative, stays
 * out. Groups are ordered by representative id; members by similarity (highest first), then id.
 */
export function groupPairs(pairs: readonly ScoredPair[]): SimilarGroup[] {
  const partners = new Map<number, { id: number; similarity: number }[]>();
  const link = (x: number, y: number, similarity: number) => {
    const list = partners.get(x);
    if (list === undefined) partners.set(x, [{ id: y, similarity }]);
    else list.push({ id: y, similarity });
  };
  for (const { a, b, similarity } of pairs) {
    if (a === b) continue;
    link(a, b, similarity);
    link(b, a, similarity);
  }
  const order = [...partners.keys()].sort((x, y) => partners.get(y)!.length - partners.get(x)!.length || x - y);
  const grouped = new Set<number>();
  const groups: SimilarGroup[] = [];
  for (const id of order) {
    if (grouped.has(id)) continue;
    const members = partners.get(id)!.filter((p) => !grouped.has(p.id));
    if (members.length === 0) continue;
    grouped.add(id);
    const seen = new Set<number>();
    const unique = members
      .sort((x, y) => y.similarity - x.similarity || x.id - y.id)
      .filter((m) => !seen.has(m.id) && (seen.add(m.id), true));
    for (const m of unique) grouped.add(m.id);
    groups.push({ representative: id, members: [{ id, similarity: 1 }, ...unique] });
  }
  return groups.sort((x, y) => x.representative - y.representative);
}
