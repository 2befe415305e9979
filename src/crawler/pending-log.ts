// Requests accepted but not yet finished, kept where the seen-set is kept, so a crawler killed
// mid-crawl is resumed by scheduling them again: node-crawler has no persistent queue, and its
// seen-set marks a URL at add time, so without this record a rerun would skip every URL that was
// queued but never fetched. An entry is written before its key can be reported new, and removed
// once its request finished.
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { InvalidArgumentError } from "../errors.js";
import type { RedisCommander } from "../redis/commander.js";

/** What is kept of a request to schedule it again: JSON-able fields only (no callbacks). */
export type PendingRequest = Record<string, unknown>;

/** The record of accepted, unfinished requests. */
export interface PendingLog {
  /** Records entries durably before returning. */
  add(entries: ReadonlyMap<string, PendingRequest>): Promise<void>;
  /** Forgets keys (their requests finished, or were not new after all). */
  remove(keys: readonly string[]): Promise<void>;
  /** Every entry recorded and not removed. */
  entries(): Promise<Map<string, PendingRequest>>;
  close(): Promise<void>;
}

/**
 * An append-only file of "+" and "-" JSON lines ("+" fsynced, see add). Opening it compacts it
 * (the live entries written to a new file, renamed over the old); a torn last line, left by a
 * crash in the middle of a write, is ignored: its write had not returned.
 */
export function filePendingLog(path: string): PendingLog {
  mkdirSync(dirname(path), { recursive: true });
  const live = new Map<string, PendingRequest>();
  if (existsSync(path)) {
    for (const line of readFileSync(path, "utf8").split("\n")) {
      let record: unknown;
      try {
        record = JSON.parse(line);
      } catch {
        continue;
      }
      if (!Array.isArray(record) || typeof record[1] !== "string") continue;
      if (record[0] === "+") live.set(record[1], record[2] as PendingRequest);
      else if (record[0] === "-") live.delete(record[1]);
    }
  }
  const aside = `${path}.${process.pid}.tmp`;
  const compact = openSync(aside, "w");
  for (const [key, request] of live) writeSync(compact, `${JSON.stringify(["+", key, request])}\n`);
  fsyncSync(compact);
  closeSync(compact);
  renameSync(aside, path);
  const fd = openSync(path, "a");
  const append = (lines: string[], sync: boolean) => {
    if (lines.length === 0) return;
    writeSync(fd, lines.join(""));
    if (sync) fsyncSync(fd);
  };
  return {
    // A "+" must reach the disk before its key is committed as seen; a "-" lost to a power cut
    // only makes a finished request run again, so removals are written without waiting for the
    // disk (a killed process loses nothing written: the kernel has it).
    add: async (entries) =>
      append(
        [...entries].map(([key, request]) => `${JSON.stringify(["+", key, request])}\n`),
        true,
      ),
    remove: async (keys) =>
      append(
        keys.map((key) => `${JSON.stringify(["-", key])}\n`),
        false,
      ),
    entries: async () => new Map(live),
    close: async () => closeSync(fd),
  };
}

/** A Redis hash of key -> request JSON (one HSET or HDEL a batch). */
export function redisPendingLog(redis: RedisCommander, hash: string): PendingLog {
  if (typeof hash !== "string" || hash === "") throw new InvalidArgumentError("pending", hash, "a Redis key");
  return {
    add: async (entries) => {
      if (entries.size === 0) return;
      const args: string[] = ["HSET", hash];
      for (const [key, request] of entries) args.push(key, JSON.stringify(request));
      await redis.send(args);
    },
    remove: async (keys) => {
      if (keys.length > 0) await redis.send(["HDEL", hash, ...keys]);
    },
    entries: async () => {
      const flat = (await redis.send(["HGETALL", hash])) as unknown;
      const out = new Map<string, PendingRequest>();
      const pairs = Array.isArray(flat) ? flat : Object.entries((flat ?? {}) as Record<string, unknown>).flat();
      for (let i = 0; i + 1 < pairs.length; i += 2) {
        try {
          out.set(String(pairs[i]), JSON.parse(String(pairs[i + 1])) as PendingRequest);
        } catch {
          // An entry no process of ours wrote: left alone.
        }
      }
      return out;
    },
    close: async () => undefined,
  };
}
