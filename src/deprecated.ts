// Names the main entry kept for one minor version after they moved to a subpath or gave way to
// openSeenSet (CHANGELOG.md, 0.3.0): each is the same value as at its new home.
import { features as featuresNow, DEFAULT_SHINGLE as DEFAULT_SHINGLENow } from "./near-dup/features.js";
import { segmentWords as segmentWordsNow } from "./near-dup/text.js";
import { IdfTable as IdfTableNow } from "./near-dup/idf.js";
import { DEFAULT_SKETCH_SIZE as DEFAULT_SKETCH_SIZENow } from "./near-dup/minhash-index.js";
import { lshLayout as lshLayoutNow } from "./near-dup/minhash.js";
import { simhashMany as simhashManyNow } from "./near-dup/simhash.js";
import { md5Spans as md5SpansNow, toHex as toHexNow } from "./hash/md5.js";
import { isInitialized as isInitializedNow } from "./wasm/module.js";

/** @deprecated Since 0.3.0: import it from `crawlsieve/near-dup`; the main entry drops this name in 0.4.0. */
export const features = featuresNow;
/** @deprecated Since 0.3.0: import it from `crawlsieve/near-dup`; the main entry drops this name in 0.4.0. */
export const segmentWords = segmentWordsNow;
/** @deprecated Since 0.3.0: import it from `crawlsieve/near-dup`; the main entry drops this name in 0.4.0. */
export const IdfTable = IdfTableNow;
/** @deprecated Since 0.3.0: import it from `crawlsieve/near-dup`; the main entry drops this name in 0.4.0. */
export type IdfTable = IdfTableNow;
/** @deprecated Since 0.3.0: import it from `crawlsieve/near-dup`; the main entry drops this name in 0.4.0. */
export const DEFAULT_SHINGLE = DEFAULT_SHINGLENow;
/** @deprecated Since 0.3.0: import it from `crawlsieve/near-dup`; the main entry drops this name in 0.4.0. */
export const DEFAULT_SKETCH_SIZE = DEFAULT_SKETCH_SIZENow;
/** @deprecated Since 0.3.0: import it from `crawlsieve/near-dup`; the main entry drops this name in 0.4.0. */
export const lshLayout = lshLayoutNow;
/** @deprecated Since 0.3.0: import it from `crawlsieve/near-dup`; the main entry drops this name in 0.4.0. */
export const simhashMany = simhashManyNow;
/** @deprecated Since 0.3.0: import it from `crawlsieve/backend`; the main entry drops this name in 0.4.0. */
export const md5Spans = md5SpansNow;
/** @deprecated Since 0.3.0: import it from `crawlsieve/backend`; the main entry drops this name in 0.4.0. */
export const toHex = toHexNow;
/** @deprecated Since 0.3.0: import it from `crawlsieve/backend`; the main entry drops this name in 0.4.0. */
export const isInitialized = isInitializedNow;
// The LMDB engine, deprecated where it is declared (its home goes in 0.4.0).
export { StoreDeduplicator } from "./seen/lmdb/store-deduplicator.js";
