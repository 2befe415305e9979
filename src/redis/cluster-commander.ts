// A node-redis Redis Cluster as a RedisCommander. Each command is routed by its first key (a
// script's first KEYS entry; an explicit route for keyless commands such as SCRIPT LOAD and
// WAIT). node-redis follows MOVED and ASK itself; this layer retries what a cluster in motion
// answers while a slot moves or a master is replaced (TRYAGAIN, CLUSTERDOWN, a node that went
// away), re-reading the slot map before each retry, until the deadline. A command whose reply
// was lost with its connection may have run: the retry is flagged to the caller (`ambiguous`),
// which decides what a second run means for its answer. A command sent `once` (WAIT, CLIENT INFO:
// their answer is about their own connection) is never retried.
import { RedisUnavailableError } from "../errors.js";
import { backoff, BLOB_STRING, RedisReplyError, toBuffers, withDeadline } from "./replies.js";
import { keySlot } from "./keys.js";
import type { RedisCommander, SendOptions } from "./send.js";

/** What a node-redis 5 cluster (createCluster) offers. */
export interface NodeRedisClusterLike {
  /** Sends one command, routed by `firstKey`'s slot. */
  sendCommand(
    firstKey: string | Buffer | undefined,
    isReadonly: boolean | undefined,
    args: (string | Buffer)[],
    options?: { typeMapping?: Record<number, unknown> },
  ): Promise<unknown>;
  readonly masters: readonly NodeRedisClusterNode[];
  readonly slots: readonly {
    readonly master: { readonly address?: string; readonly host?: string; readonly port?: number };
  }[];
  readonly _slots?: {
    /** Re-reads the slot map from a live node. */
    rediscover(startWith: unknown): Promise<void>;
  };
}

/** One master as node-redis 5 keeps it: its connection (created on first use) and a pending connect. */
export interface NodeRedisClusterNode {
  client?: { readonly isOpen?: boolean; readonly options?: unknown };
  readonly connectPromise?: unknown;
}

/** True when `client` is a node-redis cluster rather than a single connection. */
export function isNodeRedisCluster(client: unknown): client is NodeRedisClusterLike {
  return (
    client !== null &&
    typeof client === "object" &&
    "masters" in client &&
    typeof (client as NodeRedisClusterLike).sendCommand === "function"
  );
}

// Answers of a cluster in motion: the command did not run, and will once the cluster settles.
const NOT_RUN = /^(TRYAGAIN|CLUSTERDOWN|MASTERDOWN|LOADING|READONLY)/;

/** Wraps a node-redis cluster; every command may take up to `timeoutMs` in all, retries included. */
export function fromNodeRedisCluster(
  cluster: NodeRedisClusterLike,
  options: { timeoutMs?: number } = {},
): RedisCommander {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const typeMapping = { [BLOB_STRING]: Buffer };
  const rediscover = async () => {
    forgetClosedConnections(cluster.masters);
    const live = cluster.masters.find((m) => m.client?.isOpen === true);
    await cluster._slots?.rediscover(live?.client ?? cluster.masters[0]).catch(() => undefined);
    forgetClosedConnections(cluster.masters);
  };
  const send = async (args: readonly (string | Uint8Array)[], sendOptions: SendOptions = {}) => {
    const command = String(args[0]);
    const route = sendOptions.route ?? routeOf(args);
    const deadline = Date.now() + timeoutMs;
    for (let attempt = 0; ; attempt++) {
      try {
        return await withDeadline(
          () => cluster.sendCommand(route, false, toBuffers(args), { typeMapping }),
          Math.max(1, deadline - Date.now()),
          command,
        );
      } catch (error) {
        const notRun = error instanceof RedisReplyError && NOT_RUN.test(replyText(error));
        const connection = error instanceof RedisUnavailableError;
        if (!(notRun || connection) || sendOptions.once === true || Date.now() > deadline) throw error;
        // A connection lost around the command: it may have run on the old master and reached its
        // replica. node-redis reports such commands as "Socket closed unexpectedly" and also as
        // "The client is closed" (measured: keys counted twice after both), so only a refused
        // connection or the offline queue prove it never left.
        if (connection && !/offline|ECONNREFUSED/i.test(String((error as Error).cause ?? error)))
          sendOptions.ambiguous?.();
        await backoff(attempt);
        await rediscover();
      }
    }
  };
  const mastersOf = (keys: readonly string[]) => {
    const byMaster = new Map<unknown, string>();
    for (const key of keys) {
      const master = cluster.slots[keySlot(key)]?.master;
      if (!byMaster.has(master)) byMaster.set(master, key);
    }
    return [...byMaster.values()];
  };
  return { send, cluster: true, mastersOf };
}

/**
 * Drops the connection of every master whose connection has closed, so node-redis opens a new one
 * at its next command. node-redis keeps a node's client for as long as the slot map names the
 * node's address, and with reconnects off (crawlsieve's advice, so a dead master fails fast)
 * that client stays closed: a master that died and came back on the same address, or whose
 * death the slot map has not yet recorded, would answer "The client is closed" until the
 * deadline (measured: 30 s of such answers after a failover, under load).
 */
function forgetClosedConnections(masters: readonly NodeRedisClusterNode[]): void {
  for (const node of masters)
    if (node.client !== undefined && node.client.isOpen === false && node.connectPromise === undefined)
      node.client = undefined;
}

/** The key a command is routed by: a script's first key, else the first argument. */
function routeOf(args: readonly (string | Uint8Array)[]): string | Buffer | undefined {
  const name = String(args[0]).toUpperCase();
  const key = name === "EVALSHA" || name === "EVAL" ? (Number(args[2]) > 0 ? args[3] : undefined) : args[1];
  return key === undefined
    ? undefined
    : typeof key === "string"
      ? key
      : Buffer.from(key.buffer, key.byteOffset, key.byteLength);
}

/** The server's own words in a RedisReplyError ("Redis refused X: TRYAGAIN ..."). */
function replyText(error: RedisReplyError): string {
  return error.message.slice(error.message.indexOf(": ") + 2);
}
