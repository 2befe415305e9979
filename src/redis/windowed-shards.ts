// Where a windowed set's keys live in Redis: a key's 16-byte fingerprint picks one of N shard
// hashes from its first 4 bytes, and its field is the other 12 bytes (the shard implies the
// rest, so two keys share a field only when 96 bits and their shard agree). N is sized so a
// shard holds about 64 fields at the planned load: under Redis's hash-max-listpack-entries (128)
// a hash stays in the compact listpack encoding, about 20 bytes a field. N and the layout are
// recorded in a description by the first process and adopted by every other, so all map a key
// to the same field. On a cluster the shards are cut into SPREAD_SHARDS groups, each with a hash
// tag of its own on its share of the slots: one script call serves one group's keys of a batch.
import type { Fields } from "./description.js";
import { keyPrefix } from "./keys.js";
import { SPREAD_SHARDS, spreadTags } from "./spread.js";

/** Fields a shard holds at the planned load: half the listpack limit, room for the spread of a hash function and for expired fields awaiting a sweep. */
export const FIELDS_PER_SHARD = 64;
/** Most shards a description may declare: 2^26 shards of 64 keys is 4 billion keys. */
export const MAX_SHARDS = 2 ** 26;
/** Bytes of a record the batch script reads: shard index, field, TTL, forgotten time. */
export const RECORD_BYTES = 22;
/** Bytes of the fingerprint kept as the field. */
const FIELD_BYTES = 12;

/** The checked description of a windowed set's shards. */
export interface ShardLayout {
  readonly shards: number;
  readonly spread: boolean;
}

/** Checks a windowed set's description: its shard count and layout. */
export function parseShardLayout(fields: Fields): ShardLayout {
  fields.kind("windowed-set");
  const shards = fields.integer("shards", 1, MAX_SHARDS);
  fields.integer("field", FIELD_BYTES, FIELD_BYTES);
  const layout = fields.json.layout;
  if (layout !== "spread" && layout !== "tagged") fields.fail("layout", '"spread" or "tagged"');
  return { shards, spread: layout === "spread" };
}

/** What this process proposes when it is the first: shards for `items` keys, spread on a cluster. */
export function proposedLayout(items: number, cluster: boolean): Record<string, unknown> {
  return {
    kind: "windowed-set",
    shards: Math.min(MAX_SHARDS, Math.ceil(items / FIELDS_PER_SHARD)),
    field: FIELD_BYTES,
    layout: cluster ? "spread" : "tagged",
  };
}

/** Key names and key-to-shard mapping of an adopted layout. */
export class ShardMap {
  readonly shards: number;
  /** Groups of shards one script call may touch together (one slot each): 1 in one slot, else up to SPREAD_SHARDS. */
  readonly groups: number;
  private readonly tags: readonly string[] | undefined;
  private readonly prefix: string;

  constructor(name: string, layout: ShardLayout) {
    this.shards = layout.shards;
    this.groups = layout.spread ? Math.min(SPREAD_SHARDS, layout.shards) : 1;
    this.tags = layout.spread ? spreadTags(name, this.groups) : undefined;
    this.prefix = keyPrefix(name);
  }

  /** The shard of the fingerprint at byte `at` of `packed`: its first 4 bytes scaled to [0, N). */
  shardOf(packed: Uint8Array, at: number): number {
    const high = ((packed[at] << 24) | (packed[at + 1] << 16) | (packed[at + 2] << 8) | packed[at + 3]) >>> 0;
    return Math.floor((high * this.shards) / 2 ** 32);
  }

  /** The group of shard s. */
  groupOf(shard: number): number {
    return shard % this.groups;
  }

  /** The Redis key of shard s. */
  keyOf(shard: number): string {
    const id = shard.toString(36);
    return this.tags === undefined ? `${this.prefix}ws:${id}` : `cs:{${this.tags[this.groupOf(shard)]}}:ws:${id}`;
  }

  /** Every shard key, group by group. */
  keysByGroup(): string[][] {
    const out: string[][] = Array.from({ length: this.groups }, () => []);
    for (let s = 0; s < this.shards; s++) out[this.groupOf(s)].push(this.keyOf(s));
    return out;
  }
}

/** One script call's work: the shard keys it names and its packed records, and which batch keys they answer for. */
export interface ShardCall {
  readonly keys: string[];
  readonly records: Uint8Array;
  /** Index in the batch of each record, in order. */
  readonly members: number[];
}

/**
 * Cuts a batch into calls of at most `perCall` keys, each within one group, keys of one group in
 * batch order (a repeat then meets its first sighting, in the same call or a later one on the same
 * connection). `ttl[i]` is 0 for never; `forgotten[i]` 0 for none.
 */
export function shardCalls(
  map: ShardMap,
  packed: Uint8Array,
  ttl: Uint32Array,
  forgotten: Uint32Array,
  perCall: number,
): ShardCall[] {
  const count = packed.length / 16;
  const byGroup: number[][] = Array.from({ length: map.groups }, () => []);
  const shardOf = new Uint32Array(count);
  for (let i = 0; i < count; i++) {
    shardOf[i] = map.shardOf(packed, 16 * i);
    byGroup[map.groupOf(shardOf[i])].push(i);
  }
  const calls: ShardCall[] = [];
  for (const members of byGroup) {
    for (let from = 0; from < members.length; from += perCall) {
      const part = members.slice(from, from + perCall);
      const index = new Map<number, number>();
      const keys: string[] = [];
      const records = new Uint8Array(RECORD_BYTES * part.length);
      const view = new DataView(records.buffer);
      part.forEach((i, r) => {
        let k = index.get(shardOf[i]);
        if (k === undefined) {
          keys.push(map.keyOf(shardOf[i]));
          k = keys.length;
          index.set(shardOf[i], k);
        }
        const at = RECORD_BYTES * r;
        view.setUint16(at, k, true);
        records.set(packed.subarray(16 * i + 4, 16 * i + 16), at + 2);
        view.setUint32(at + 14, ttl[i], true);
        view.setUint32(at + 18, forgotten[i], true);
      });
      calls.push({ keys, records, members: part });
    }
  }
  return calls;
}
