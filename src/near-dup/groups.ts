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

/** Star clusters: each document considered, the representative it joined (itself when it is one) and its score against it. */
export interface Clustering {
  /** The documents, in the order they were considered. */
  readonly ids: Uint32Array;
  /** representatives[i]: the representative of ids[i], ids[i] itself for a representative. */
  readonly representatives: Uint32Array;
  /** similarities[i]: the score of ids[i] against its representative (1 for a representative). */
  readonly similarities: Float64Array;
}

/**
 * Star clusters from pairs, as MinHashIndex.cluster() makes them from its index: documents `order`
 * are taken in turn; each joins its best-scoring partner already a representative (ties: the one
 * taken first), else becomes one. Every member is thus paired with its representative (no chains),
 * and the cost is that of the pairs, which this function is given whole.
 */
export function leaderClusters(order: ArrayLike<number>, pairs: readonly ScoredPair[]): Clustering {
  const ids = Uint32Array.from(order);
  const position = new Map<number, number>();
  ids.forEach((id, i) => position.set(id, i));
  const partners = new Map<number, ScoredPair[]>();
  for (const pair of pairs) {
    for (const id of [pair.a, pair.b]) {
      const list = partners.get(id);
      if (list === undefined) partners.set(id, [pair]);
      else list.push(pair);
    }
  }
  const representatives = new Uint32Array(ids.length);
  const similarities = new Float64Array(ids.length).fill(1);
  const leads = new Set<number>();
  ids.forEach((id, i) => {
    representatives[i] = id;
    let best: number | undefined;
    for (const { a, b, similarity } of partners.get(id) ?? []) {
      const other = a === id ? b : a;
      if (other === id || !leads.has(other)) continue;
      if (
        best === undefined ||
        similarity > similarities[i] ||
        (similarity === similarities[i] && position.get(other)! < position.get(best)!)
      ) {
        best = other;
        similarities[i] = similarity;
      }
    }
    if (best === undefined) leads.add(id);
    else representatives[i] = best;
  });
  return { ids, representatives, similarities };
}

/** The groups of a clustering with more than one member, ordered by representative id; members by score (highest first), then id. */
export function clusterGroups(clustering: Clustering): SimilarGroup[] {
  const members = new Map<number, { id: number; similarity: number }[]>();
  const { ids, representatives, similarities } = clustering;
  for (let i = 0; i < ids.length; i++) {
    if (representatives[i] === ids[i]) continue;
    const list = members.get(representatives[i]);
    const member = { id: ids[i], similarity: similarities[i] };
    if (list === undefined) members.set(representatives[i], [member]);
    else list.push(member);
  }
  return [...members]
    .sort(([x], [y]) => x - y)
    .map(([representative, list]) => ({
      representative,
      members: [
        { id: representative, similarity: 1 },
        ...list.sort((x, y) => y.similarity - x.similarity || x.id - y.id),
      ],
    }));
}
