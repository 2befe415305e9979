// The description of a Redis structure's geometry: written once, by whichever process creates
// the structure (SET NX), and adopted by every process that opens it, so two processes started
// with different options never read each other's bits or counters with the wrong size. The
// stored text is checked before anything is sized from it: a forged or damaged description is a
// FormatError naming the key and the field, never a huge allocation or a silent wrong answer.
import { FormatError } from "../errors.js";
import type { RedisCommander } from "./commander.js";
import { durableBatch, type Durability } from "./durability.js";

/** Version of the description written now; descriptions without one are version 1. A structure whose stored layout changed passes its own (RedisMinHashIndex: 2). */
export const DESCRIPTION_VERSION = 1;

/** A parsed, checked description and the exact text Redis holds (scripts compare against it). */
export interface Adopted<T> {
  readonly value: T;
  readonly raw: string;
}

/**
 * Writes `proposed` under `key` unless a description exists, then reads and checks the one that
 * is there. With "replicated" durability the description reaches a replica before it is used: a
 * structure whose writes are acknowledged only once replicated must not lose, in a failover, the
 * description they are read by (a later open would record a new, empty geometry). A description
 * of another `version` than this build writes is refused (FormatError ERR_VERSION), never read.
 */
export async function adoptDescription<T>(
  redis: RedisCommander,
  key: string,
  proposed: Record<string, unknown>,
  parse: (fields: Fields) => T,
  durability: Durability = "local",
  version = DESCRIPTION_VERSION,
): Promise<Adopted<T>> {
  const record = () => redis.send(["SET", key, JSON.stringify({ v: version, ...proposed }), "NX"]);
  await durableBatch(redis, durability, [key], record, (first) => first);
  const raw = await redis.send(["GET", key]);
  if (raw === null || raw === undefined)
    throw new FormatError(`Redis key ${key} vanished while it was being opened`, "ERR_BAD_PARAMS");
  const text = String(raw);
  return { value: parseDescription(key, text, parse, version), raw: text };
}

/**
 * `open` run once, its result kept for every later call; a failure (Redis away) is not kept, so
 * the next call tries again. For structures made with `new`, which adopt at their first call.
 */
export function once<T>(open: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | undefined;
  return () =>
    (pending ??= open().catch((error: unknown) => {
      pending = undefined;
      throw error;
    }));
}

/** Parses and checks a description's text, refusing any other version than `version`. */
export function parseDescription<T>(
  key: string,
  text: string,
  parse: (fields: Fields) => T,
  version = DESCRIPTION_VERSION,
): T {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new FormatError(`Redis key ${key} does not hold a crawlsieve description (not JSON)`, "ERR_BAD_PARAMS");
  }
  if (json === null || typeof json !== "object" || Array.isArray(json))
    throw new FormatError(`Redis key ${key} does not hold a crawlsieve description (not an object)`, "ERR_BAD_PARAMS");
  const fields = new Fields(key, json as Record<string, unknown>);
  const stored = (json as Record<string, unknown>).v ?? 1;
  if (stored !== version)
    throw new FormatError(
      `Redis key ${key} has description version ${JSON.stringify(stored)}; this crawlsieve reads version ${version}`,
      "ERR_VERSION",
    );
  return parse(fields);
}

/** Typed, bounded reads of a description's fields; a bad one is a FormatError naming it. */
export class Fields {
  constructor(
    private readonly key: string,
    /** The parsed JSON, for fields checked by hand. */ readonly json: Record<string, unknown>,
  ) {}

  /** A string field that must equal `expected`. */
  kind(expected: string): void {
    if (this.json.kind !== expected) this.fail("kind", `"${expected}"`);
  }

  /** An integer field within [min, max]. */
  integer(name: string, min: number, max: number): number {
    const value = this.json[name];
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min || value > max)
      this.fail(name, `an integer from ${min} to ${max}`);
    return value as number;
  }

  /** An optional number within [min, max) (0 when absent). */
  optionalNumber(name: string, min: number, max: number): number {
    const value = this.json[name];
    if (value === undefined) return 0;
    if (typeof value !== "number" || !(value >= min && value < max)) this.fail(name, `a number in [${min}, ${max})`);
    return value as number;
  }

  /** Throws a FormatError naming the field, its value and what was expected. */
  fail(name: string, expected: string): never {
    throw new FormatError(
      `Redis key ${this.key}: field "${name}" must be ${expected}, got ${JSON.stringify(this.json[name]) ?? "nothing"}`,
      "ERR_BAD_PARAMS",
    );
  }
}
