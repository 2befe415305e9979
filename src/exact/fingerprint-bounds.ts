// What a FingerprintSet can hold at most, checked against `items` before any memory is reserved:
// items sizes only the first shard (the others are made as keys fill it), so a plan no machine or
// no directory of shards could hold would otherwise be found out only after hours of adding.
import { FilterTooLargeError } from "../errors.js";
import { LOG_PARTS } from "../wasm/bucket-layout.js";
import { machineMemory } from "../wasm/machine-memory.js";
import { shardCapacity, shardTableBytes } from "./fingerprint-shard.js";

/** Routing bits a set may use: the high word's bits below its partition bits, so at most 2^ROUTING_BITS shards. */
export const ROUTING_BITS = 32 - LOG_PARTS;

/** Throws FilterTooLargeError naming `items` when that many keys cannot fit: past 2^ROUTING_BITS full shards, or in tables larger than the machine's memory. */
export function checkPlannedKeys(items: number): void {
  const bytes = shardTableBytes(items);
  const most = 2 ** ROUTING_BITS * shardCapacity();
  if (items > most)
    throw new FilterTooLargeError(
      bytes,
      `items ${items} is past the ${most} keys a fingerprint set holds (2^${ROUTING_BITS} WebAssembly memories of ${shardCapacity()} keys)`,
    );
  const machine = machineMemory();
  if (bytes > machine)
    throw new FilterTooLargeError(
      bytes,
      `items ${items} needs that many bytes of fingerprint tables at their fullest, past this machine's memory (${machine} bytes, ${(machine / 2 ** 30).toFixed(1)} GiB)`,
    );
}
