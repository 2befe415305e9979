// What `near-dups --dedup` does with each record, worked out once the first pass has read them:
// records are grouped into documents (exact duplicates share one, see near-dups-exact.ts), each
// document stands for its best record by the --keep rule, the documents are clustered in the
// order of those records, and every record of a cluster but the best of its leading document is
// removed as a duplicate of that record. Clusters are numbered by the input position of their
// first record, so the numbers depend on the input alone, never on the rule or the engine. With
// --against, a saved index's documents come first and lead: a record joining one is removed, naming it.
import type { DatasetPlan } from "./near-dups-dataset.js";
import type { Finder, OnProgress } from "./near-dups-finders.js";
import type { IdList } from "./near-dups-ids.js";

/** What the first pass read, by record and by document. */
export interface ReadRecords {
  readonly ids: IdList;
  /** The document of each record. */
  readonly documentOf: Uint32Array;
  /** 1 for a document without a word (its records are kept, in no cluster). */
  readonly wordless: Uint8Array;
}

/** Clusters the documents and decides every record; `order` compares records by the --keep rule. */
export function datasetPlan(
  read: ReadRecords,
  finder: Finder,
  order: (a: number, b: number) => number,
  inInputOrder: boolean,
  onProgress: OnProgress,
  prior = 0,
): DatasetPlan {
  const { documentOf, wordless } = read;
  const n = documentOf.length;
  const docs = wordless.length;
  // The record each document stands for: the first of its records in the rule's order.
  const best = new Uint32Array(docs).fill(0xffffffff);
  for (let r = 0; r < n; r++) {
    const d = documentOf[r];
    if (best[d] === 0xffffffff || order(r, best[d]) < 0) best[d] = r;
  }
  // A saved index's documents (--against: 0 to prior - 1, no record here) go first, so they lead.
  const taken = Uint32Array.from({ length: docs }, (_, d) => d);
  // Documents are numbered by their first record, so input order needs no sort.
  if (!inInputOrder) taken.subarray(prior).sort((x, y) => order(best[x], best[y]));
  const clustering = finder.cluster(taken, onProgress);
  const leader = new Uint32Array(docs);
  const scoreOf = new Float64Array(docs);
  clustering.ids.forEach((d, i) => {
    leader[d] = clustering.representatives[i];
    scoreOf[d] = clustering.similarities[i];
  });
  // An exact duplicate of the record kept scores what the engine gives identical texts.
  const same = finder.field === "distance" ? 0 : 1;
  const representative = new Uint32Array(n);
  const score = new Float64Array(n);
  const cluster = new Uint32Array(n);
  const clusterOfLeader = new Uint32Array(docs);
  const sizes: number[] = [0];
  for (let r = 0; r < n; r++) {
    const d = documentOf[r];
    if (wordless[d] === 1) {
      representative[r] = r;
      continue;
    }
    const lead = leader[d];
    // A record led by a saved document is a duplicate of it: its id follows the records' in ids.
    representative[r] = lead < prior ? n + lead : best[lead];
    score[r] = d === lead ? same : scoreOf[d];
    if (clusterOfLeader[lead] === 0) {
      clusterOfLeader[lead] = sizes.length;
      sizes.push(0);
    }
    cluster[r] = clusterOfLeader[lead];
    sizes[cluster[r]]++;
  }
  return {
    representative,
    score,
    cluster,
    clusterSize: Uint32Array.from(sizes),
    ids: read.ids,
    field: finder.field,
    leader,
    best,
  };
}
