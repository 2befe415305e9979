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

/** How long a WAIT may take before the batch fails as unreplicated. */
const WAIT_MS = 5_000;

/** Waits until one replica of the master of each written key has every write sent before; RedisUnavailableError otherwise. */
export async function replicated(redis: RedisCommander, keys: readonly string[]): Promise<void> {
  // WAIT counts the replicas that acknowledged all writes of this connection: one per master.
  const routes = redis.mastersOf ? redis.mastersOf(keys) : [keys[0]];
  const replies = await Promise.all(routes.map((route) => redis.send(["WAIT", "1", String(WAIT_MS)], { route })));
  const short = replies.findIndex((reply) => Number(reply) < 1);
  if (short !== -1) throw new RedisUnavailableError(`WAIT for ${routes[short]}'s master`, new Error(`no replica acknowledged the writes within ${WAIT_MS} ms`));
}
