// Idle instances kept for the next structure. Making an instance costs about 0.3 ms, more than
// deduplicating a short text, so short-lived structures (dedupLines called in a loop) take a
// cleared one instead. Only small memories are kept: a big one is given back to the platform.
import { Arena } from "./arena.js";

const MAX_IDLE = 2;
const MAX_POOLED_BYTES = 8 << 20;
const idle: Arena[] = [];

/** An instance with zeroed memory past its static data: an idle one when there is one, else a new one. */
export function takeArena(): Arena {
  return idle.pop() ?? new Arena();
}

/** Hands an instance its owner is done with back for reuse (its memory is cleared now); nothing may use it after. */
export function giveBackArena(arena: Arena): void {
  if (idle.length >= MAX_IDLE || arena.k.memory.buffer.byteLength > MAX_POOLED_BYTES) return;
  arena.clear();
  idle.push(arena);
}
