// Bit positions for filters kept outside WASM memory: keys are staged and hashed in WASM exactly
// as for the in-memory filters (assembly/bloom.ts bloomPositions), so a Redis filter holds the
// same bits as a BloomFilter with the same geometry.
import { Arena } from "../wasm/arena.js";
import { array, type ArrayRegion } from "../wasm/array-region.js";
import { eachBatch } from "../wasm/batch.js";
import { RecordArray } from "../wasm/record-array.js";
import { byPartition } from "../wasm/route.js";
import type { RedisCommander } from "./commander.js";
import { BATCH, Staging } from "../wasm/staging.js";

/** One mapped batch: n keys from key `at`, `words` u32 a key (the partition first). */
export interface MappedBatch {
  readonly n: number;
  readonly at: number;
  readonly positions: Uint32Array;
  /** Each key's partition (the first of its words). */
  readonly partitions: Uint32Array;
}

/** The keys of one shard within a mapped batch: their indices in the batch (at most the chunk asked for). */
export interface ShardChunk extends MappedBatch {
  readonly shard: number;
  readonly members: readonly number[];
}

/** Redis bitmaps number bits from the most significant bit of each byte; ours from the least. */
export function redisBitOffset(bit: number): number {
  return bit - (bit & 7) + (7 - (bit & 7));
}

/**
 * Maps keys to (partition, k positions) with one instance of its own; for the blocked layout to
 * (partition, block, k offsets inside the block).
 */
export class PositionMapper {
  private readonly arena = new Arena();
  private readonly staging: Staging;
  /** A batch's answers, `words` u32 a key. */
  private readonly out: ArrayRegion;
  /** u32 words a key's answer takes: the partition, a block for the blocked layout, then k positions. */
  readonly words: number;

  constructor(
    readonly slots: number,
    readonly partitions: number,
    readonly hashes: number,
    private readonly blocked = false,
  ) {
    this.words = hashes + (blocked ? 2 : 1);
    const { out, end } = this.arena.place(
      { out: array(4 * this.words, BATCH) },
      this.arena.base,
      "a batch of bit positions",
    );
    this.out = out;
    this.staging = new Staging(this.arena, end);
  }

  /** Maps every key, batch by batch through the one batch loop (src/wasm/batch.ts). */
  batches(keys: readonly (string | Uint8Array)[]): MappedBatch[] {
    const out: MappedBatch[] = [];
    eachBatch(this.staging, { list: keys }, (n, at) => out.push({ n, at, ...this.mapStaged(n) }));
    return out;
  }

  /** Maps every key and groups each batch's keys by shard, in chunks of at most `chunk` keys (one command or script call each). */
  byShard(keys: readonly (string | Uint8Array)[], chunk: number): ShardChunk[] {
    return this.batches(keys).flatMap((batch) =>
      byPartition(batch.n, (j) => batch.partitions[j], chunk).map(([shard, members]) => ({ ...batch, shard, members })),
    );
  }

  /** Positions of the n staged keys (`words` u32 a key) and their partitions. */
  private mapStaged(n: number): { positions: Uint32Array; partitions: Uint32Array } {
    const { arena, staging } = this;
    staging.hashStaged(n);
    if (this.blocked)
      arena.k.blockedPositions(this.slots, this.partitions, this.hashes, staging.hashesPtr, n, this.out.ptr);
    else arena.k.bloomPositions(this.slots, this.partitions, this.hashes, staging.hashesPtr, n, this.out.ptr);
    const answers = new RecordArray(arena.u8, this.out, { partition: 0 }, 0, n);
    const partitions = Uint32Array.from({ length: n }, (_, j) => answers.get(j, "partition"));
    return { positions: this.out.view(arena.u8, Uint32Array, 0, n).slice(), partitions };
  }
}

/** Keys per BITFIELD command: a batch is cut so no single reply grows huge. */
const KEYS_PER_COMMAND = 256;

/** One BITFIELD command shape: `name shardKey ...prefix` then, per position, `...field offset(position) ...value`. */
export interface BitfieldCommand {
  readonly name: string;
  readonly prefix?: readonly string[];
  readonly shardKey: (shard: number) => string;
  /** The op and type before each offset, e.g. ["SET", "u1"]. */
  readonly field: readonly string[];
  /** A position as the command's offset text. */
  readonly offset: (position: number) => string;
  /** What follows each offset, e.g. ["1"] for SET; empty for GET. */
  readonly value?: readonly string[];
  /** The answer for a key whose command was sent twice after a lost reply. */
  readonly ambiguous?: number;
}

/**
 * Runs a per-key BITFIELD over keys kept in shards: each mapped batch is grouped by shard and
 * sent as one command per shard chunk (each key's ops reply with one value per hash),
 * pipelined; result[i] = answer(the k values of keys[i]). `answer` gets a scratch array it must
 * not keep: a batch of 4096 keys at k = 13 would otherwise allocate 4096 arrays per call.
 */
export async function bitfieldPerKey(
  redis: RedisCommander,
  mapper: PositionMapper,
  keys: readonly (string | Uint8Array)[],
  command: BitfieldCommand,
  answer: (values: readonly number[]) => number,
): Promise<Uint8Array> {
  const out = new Uint8Array(keys.length);
  const k = mapper.hashes;
  const { field, offset } = command;
  const value = command.value ?? [];
  const scratch = new Array<number>(k).fill(0);
  const pending: Promise<void>[] = [];
  for (const { at: base, positions, shard, members: chunk } of mapper.byShard(keys, KEYS_PER_COMMAND)) {
    const args: string[] = [command.name, command.shardKey(shard), ...(command.prefix ?? [])];
    for (const j of chunk) {
      for (let b = 1; b <= k; b++) {
        for (const part of field) args.push(part);
        args.push(offset(positions[(k + 1) * j + b]));
        for (const part of value) args.push(part);
      }
    }
    // Sent twice after a lost reply (a failover), the second reply may show bits the first run
    // set: then `ambiguous` answers instead (an add reports its keys new: at least once, never lost).
    let twice = false;
    pending.push(
      redis.send(args, { ambiguous: () => (twice = true) }).then((reply) => {
        const values = reply as unknown[];
        for (let at = 0; at < chunk.length; at++) {
          if (twice && command.ambiguous !== undefined) {
            out[base + chunk[at]] = command.ambiguous;
            continue;
          }
          for (let b = 0; b < k; b++) scratch[b] = Number(values[at * k + b]);
          out[base + chunk[at]] = answer(scratch);
        }
      }),
    );
  }
  await Promise.all(pending);
  return out;
}
