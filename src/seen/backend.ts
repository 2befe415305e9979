/**
 * `crawlsieve/backend`: parts for people who write a seen-set backend of their own: the persisted
 * exact seen-set over any batch log and lock (what the disk and browser backends are made of),
 * MD5 of keys given as spans of one buffer, hex, and whether the module is loaded.
 * @module
 */
export { PersistedSeenSet, type PersistedParts, type SeenTable } from "./persisted-seen-set.js";
export type { LockRunner } from "./log-driver.js";
export type { BatchLog, LogRead, LogWrite } from "./batch-log.js";
export { md5Spans, toHex } from "../hash/md5.js";
export { isInitialized } from "../wasm/module.js";
