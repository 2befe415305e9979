/**
 * `crawlsieve/near-dup`: the parts under the near-duplicate indexes, for people who build their
 * own: features and word segmentation, IDF weights, MinHash band layouts, SimHash of many texts,
 * and the clustering of scored pairs. The indexes themselves are on the main entry.
 * @module
 */
export { features, DEFAULT_SHINGLE, type FeatureOptions } from "./features.js";
export { segmentWords } from "./text.js";
export { IdfTable } from "./idf.js";
export { lshLayout } from "./minhash.js";
export { DEFAULT_SKETCH_SIZE } from "./minhash-index.js";
export { simhashMany } from "./simhash.js";
export { groupPairs, leaderClusters, type ScoredPair } from "./groups.js";
