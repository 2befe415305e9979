// The one thing crawlsieve needs from a Redis client: send a command, get its reply. node-redis
// is adapted here; any other client (ioredis: `(args) => client.call(...args)`) plugs in through
// the same function. Commands issued in the same tick are pipelined by node-redis.
import { InvalidArgumentError } from "../errors.js";
import { fromNodeRedisCluster, isNodeRedisCluster, type NodeRedisClusterLike } from "./cluster-commander.js";
import { BLOB_STRING, toBuffers, withDeadline } from "./replies.js";
import type { RedisCommander, RedisSend } from "./send.js";

export { RedisReplyError } from "./replies.js";
export type { RedisCommander, RedisSend, SendOptions } from "./send.js";

/** What a node-redis 5 client offers (createClient() after connect()). */
export interface NodeRedisLike {
  /** Sends one command; bulk strings come back as Buffers through the typeMapping option. */
  sendCommand(args: (string | Buffer)[], options?: { typeMapping?: Record<number, unknown> }): Promise<unknown>;
}

/**
 * Wraps a node-redis client, or a node-redis cluster (createCluster; see fromNodeRedisCluster).
 * Every command gets a deadline (default 10 s) so a server that went away fails with
 * RedisUnavailableError instead of hanging; a reply error (wrong type, script error) is a
 * CrawlsieveError naming the command.
 */
export function fromNodeRedis(
  client: NodeRedisLike | NodeRedisClusterLike,
  options: { timeoutMs?: number } = {},
): RedisCommander {
  if (isNodeRedisCluster(client)) return fromNodeRedisCluster(client, options);
  if (client === null || typeof client !== "object" || typeof client.sendCommand !== "function") {
    throw new InvalidArgumentError(
      "client",
      client,
      "a node-redis client (createClient() after connect()) or cluster (createCluster())",
    );
  }
  const timeoutMs = options.timeoutMs ?? 10_000;
  const typeMapping = { [BLOB_STRING]: Buffer };
  return {
    send: (args) =>
      withDeadline(() => client.sendCommand(toBuffers(args), { typeMapping }), timeoutMs, String(args[0])),
  };
}

/** A RedisCommander as it is, or a node-redis client or cluster wrapped by fromNodeRedis. */
export function asCommander(client: unknown): RedisCommander {
  if (client !== null && typeof client === "object" && typeof (client as RedisCommander).send === "function")
    return client as RedisCommander;
  return fromNodeRedis(client as Parameters<typeof fromNodeRedis>[0]);
}

/** Wraps a plain send function (for other clients), with the same deadline and error mapping. */
export function fromSend(send: RedisSend, options: { timeoutMs?: number } = {}): RedisCommander {
  if (typeof send !== "function") throw new InvalidArgumentError("send", send, "a function (args) => Promise<reply>");
  const timeoutMs = options.timeoutMs ?? 10_000;
  return { send: (args) => withDeadline(() => send(args), timeoutMs, String(args[0])) };
}
