// Bit positions for filters kept outside WASM memory: keys are staged and hashed in WASM exactly
// as for the in-memory filters (assembly/bloom.ts bloomPositions), so a Redis filter holds the
// same bits as a BloomFilter with the same geometry.
import { Arena } from "../wasm/arena.js";
import { BATCH, Staging } from "../wasm/staging.js";

/** Redis bitmaps number bits from the most significant bit of each byte; ours from the least. */
export function redisBitOffset(bit: number): number {
  return bit - (bit & 7) + (7 - (bit & 7));
}

/** Maps keys to (partition, k positions) with one instance of its own. */
export class PositionMapper {
  private readonly arena = new Arena();
  private readonly staging: Staging;
  private readonly outPtr: number;

  constructor(private readonly slots: number, private readonly partitions: number, readonly hashes: number) {
    this.outPtr = this.arena.base;
    const outBytes = 4 * (hashes + 1) * BATCH;
    this.arena.reserve(this.outPtr + outBytes);
    this.staging = new Staging(this.arena, this.outPtr + outBytes);
  }

  /** Maps keys[from ..] (one batch); returns how many and, per key, [partition, bit 1..k]. */
  map(keys: readonly (string | Uint8Array)[], from: number): { n: number; positions: Uint32Array } {
    const n = this.staging.encodeBatch(keys, from);
    const { arena, staging } = this;
    arena.k.hashPairs(staging.keysPtr, staging.spansPtr, n, staging.hashesPtr);
    arena.k.bloomPositions(this.slots, this.partitions, this.hashes, staging.hashesPtr, n, this.outPtr);
    const words = (this.hashes + 1) * n;
    return { n, positions: arena.u32.slice(this.outPtr >>> 2, (this.outPtr >>> 2) + words) };
  }
}

/** The keys of a mapped batch grouped by partition, in chunks of at most `chunk` keys: [partition, key indices]. */
export function byPartition(positions: Uint32Array, n: number, hashes: number, chunk: number): [number, number[]][] {
  const groups = new Map<number, number[]>();
  for (let j = 0; j < n; j++) {
    const partition = positions[(hashes + 1) * j];
    if (!groups.has(partition)) groups.set(partition, []);
    groups.get(partition)!.push(j);
  }
  const out: [number, number[]][] = [];
  for (const [partition, members] of groups) for (let c = 0; c < members.length; c += chunk) out.push([partition, members.slice(c, c + chunk)]);
  return out;
}
