// Durability a Redis structure acknowledges with: "local" (default), a key is new once the master
// that holds it has it, so a master killed before it replicated can lose the last writes;
// "replicated", a batch returns only after WAIT confirms that a replica of every master it wrote
// to has it, so a failover after the acknowledgement loses nothing.
//
// WAIT counts the replicas that have every write *of the connection it is sent on*. A WAIT that
// reaches another connection (the old master died and the slot now lives elsewhere, or the client
// reconnected) answers for writes that connection never made, and succeeds at once. So each
// master's connection is identified (CLIENT INFO: its id and both addresses) before the batch's
// writes and again after each WAIT, both sent once, never retried on another node; a batch whose
// connection changed, or whose WAIT failed, sends its writes again (at least once: a key may be
// reported new twice, never lost) and waits again, until the deadline.
import { InvalidArgumentError, RedisUnavailableError } from "../errors.js";
import { backoff } from "./replies.js";
import type { RedisCommander } from "./send.js";

/** How far a write must have gone before a key is reported new. */
export type Durability = "local" | "replicated";

/** Checks a durability option ("local" when absent). */
export function durabilityOption(value: unknown): Durability {
  if (value === undefined) return "local";
  if (value !== "local" && value !== "replicated")
    throw new InvalidArgumentError("durability", value, '"local" or "replicated"');
  return value;
}

/** How long a batch may wait for a replica: long enough for a replica to re-attach and resync after a failover. */
const REPLICATION_DEADLINE_MS = 30_000;
const WAIT_STEP_MS = 1_000;

/**
 * Runs a batch's writes (`write`, which sends every write of the batch) and, with "replicated"
 * durability, returns only once one replica of the master of each of `keys` has them, on the
 * connection that carried them. A lost connection, a failed WAIT or a master with no replica yet
 * (just promoted) makes it send the writes again and merge the answers (`merge(first, again)`);
 * past the deadline it is RedisUnavailableError, and nothing is acknowledged.
 */
export async function durableBatch<T>(
  redis: RedisCommander,
  durability: Durability,
  keys: readonly string[],
  write: () => Promise<T>,
  merge: (first: T, again: T) => T,
): Promise<T> {
  if (durability !== "replicated" || keys.length === 0) return write();
  const deadline = Date.now() + REPLICATION_DEADLINE_MS;
  let answer: T | undefined;
  let lastFault: unknown;
  for (let attempt = 0; ; attempt++) {
    const routes = redis.mastersOf ? redis.mastersOf(keys) : [keys[0]];
    // Sent before any write of the batch, on the connections the writes will take.
    const before = routes.map((route) => connectionOf(redis, route));
    const again = await write();
    answer = answer === undefined ? again : merge(answer, again);
    const fault = await replicatedOn(redis, routes, before, deadline);
    if (fault === undefined) return answer;
    lastFault = fault;
    if (Date.now() > deadline) break;
    await backoff(attempt);
  }
  throw new RedisUnavailableError(
    "WAIT for a replica of every master written to",
    lastFault instanceof Error
      ? lastFault
      : new Error(`no replica acknowledged the writes within ${REPLICATION_DEADLINE_MS} ms`),
  );
}

/** durableBatch's merge for new-key flags: a key new in either run is reported new. */
export function orFlags(first: Uint8Array, again: Uint8Array): Uint8Array {
  return first.map((flag, i) => flag | again[i]);
}

/** Waits on every route; undefined when each WAIT was answered on the connection that wrote, else the fault. */
async function replicatedOn(
  redis: RedisCommander,
  routes: readonly string[],
  before: readonly Promise<string | Error>[],
  deadline: number,
): Promise<unknown> {
  const faults = await Promise.all(
    routes.map(async (route, i) => {
      const writer = await before[i];
      if (writer instanceof Error) return writer;
      for (;;) {
        let replicas: number;
        let after: string | Error;
        try {
          // Pipelined on one connection: CLIENT INFO answers for the connection the WAIT took.
          [replicas, after] = await Promise.all([
            redis.send(["WAIT", "1", String(WAIT_STEP_MS)], { route, once: true }).then(Number),
            connectionOf(redis, route),
          ]);
        } catch (error) {
          return error;
        }
        if (after instanceof Error) return after;
        if (after !== writer)
          return new Error(`the connection to ${route}'s master changed between the writes and WAIT`);
        if (replicas >= 1) return undefined;
        if (Date.now() > deadline)
          return new Error(`no replica acknowledged the writes within ${REPLICATION_DEADLINE_MS} ms`);
      }
    }),
  );
  return faults.find((fault) => fault !== undefined);
}

/** Who this connection is on the server: its id and both ends' addresses (CLIENT INFO), or the error that stopped the asking. */
function connectionOf(redis: RedisCommander, route: string): Promise<string | Error> {
  return redis.send(["CLIENT", "INFO"], { route, once: true }).then(
    (reply) => {
      const who = String(reply)
        .split(" ")
        .filter((field) => /^(id|addr|laddr)=/.test(field))
        .join(" ");
      return who.startsWith("id=") ? who : new Error(`CLIENT INFO named no connection: ${String(reply).slice(0, 80)}`);
    },
    (error: unknown) => (error instanceof Error ? error : new Error(String(error))),
  );
}
