// Durability a Redis structure acknowledges with: "local" (default), a key is new once the master
// that holds it has it, so a master killed before it replicated can lose the last writes;
// "replicated", a batch returns only after WAIT confirms that a replica of every master it wrote
// to has it, so a failover after the acknowledgement loses nothing.
import { InvalidArgumentError, RedisUnavailableError } from "../errors.js";
import type { RedisCommander } from "./send.js";

/** How far a write must have gone before a key is reported new. */
export type Durability = "local" | "replicated";

/** Checks a durability option ("local" when absent). */
export function durabilityOption(value: unknown): Durability {
  if (value === undefined) return "local";
  if (value !== "local" && value !== "replicated") throw new InvalidArgumentError("durability", value, '"local" or "replicated"');
  return value;
}

/** How long a batch may wait for a replica: long enough for a replica to re-attach and resync after a failover. */
const REPLICATION_DEADLINE_MS = 30_000;
const WAIT_STEP_MS = 1_000;

/**
 * Waits until one replica of the master of each written key has every write sent before. A
 * master with no replica yet (just promoted in a failover) holds the batch until one attaches
 * and catches up; past the deadline it is RedisUnavailableError, and nothing is acknowledged.
 */
export async function replicated(redis: RedisCommander, keys: readonly string[]): Promise<void> {
  // WAIT counts the replicas that acknowledged all writes of this connection: one per master.
  const routes = redis.mastersOf ? redis.mastersOf(keys) : [keys[0]];
  const deadline = Date.now() + REPLICATION_DEADLINE_MS;
  await Promise.all(
    routes.map(async (route) => {
      while (Number(await redis.send(["WAIT", "1", String(WAIT_STEP_MS)], { route })) < 1) {
        if (Date.now() > deadline) throw new RedisUnavailableError(`WAIT for ${route}'s master`, new Error(`no replica acknowledged the writes within ${REPLICATION_DEADLINE_MS} ms`));
      }
    }),
  );
}
