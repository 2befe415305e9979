// The one thing crawlsieve needs from a Redis client: send a command, get its reply. node-redis
// is adapted here; any other client (ioredis: `(args) => client.call(...args)`) plugs in through
// the same function. Commands issued in the same tick are pipelined by node-redis.
import { CrawlsieveError, InvalidArgumentError, RedisUnavailableError } from "../errors.js";

/** Sends one command (name first) and resolves with its reply. */
export type RedisSend = (args: readonly (string | Uint8Array)[]) => Promise<unknown>;

/** A Redis connection as crawlsieve uses it. */
export interface RedisCommander {
  readonly send: RedisSend;
}

/** What node-redis 5 clients offer (bulk strings as Buffers through the typeMapping option). */
interface NodeRedisLike {
  sendCommand(args: (string | Buffer)[], options?: { typeMapping?: Record<number, unknown> }): Promise<unknown>;
}

// RESP bulk strings ("$") come back as Buffers, so bitmaps and binary fields survive intact
// (node-redis decodes them as UTF-8 text by default).
const BLOB_STRING = 36;

/**
 * Wraps a node-redis client. Every command gets a deadline (default 10 s) so a server that went
 * away fails with RedisUnavailableError instead of hanging; a reply error (wrong type, script
 * error) is a CrawlsieveError naming the command.
 */
export function fromNodeRedis(client: NodeRedisLike, options: { timeoutMs?: number } = {}): RedisCommander {
  if (client === null || typeof client !== "object" || typeof client.sendCommand !== "function") {
    throw new InvalidArgumentError("client", client, "a node-redis client (createClient() after connect())");
  }
  const timeoutMs = options.timeoutMs ?? 10_000;
  const typeMapping = { [BLOB_STRING]: Buffer };
  return {
    send: (args) => withDeadline(() => client.sendCommand(args.map((a) => (typeof a === "string" ? a : Buffer.from(a.buffer, a.byteOffset, a.byteLength))), { typeMapping }), timeoutMs, String(args[0])),
  };
}

/** Wraps a plain send function (for other clients), with the same deadline and error mapping. */
export function fromSend(send: RedisSend, options: { timeoutMs?: number } = {}): RedisCommander {
  if (typeof send !== "function") throw new InvalidArgumentError("send", send, "a function (args) => Promise<reply>");
  const timeoutMs = options.timeoutMs ?? 10_000;
  return { send: (args) => withDeadline(() => send(args), timeoutMs, String(args[0])) };
}

/** A reply error from Redis itself (the server answered, the command failed). */
export class RedisReplyError extends CrawlsieveError {
  constructor(command: string, message: string) {
    super("ERR_REDIS_REPLY", `Redis refused ${command}: ${message}`);
  }
}

function withDeadline(call: () => Promise<unknown>, timeoutMs: number, command: string): Promise<unknown> {
  // A client that throws instead of rejecting still gets its error mapped below.
  let reply: Promise<unknown>;
  try {
    reply = call();
  } catch (error) {
    reply = Promise.reject(error);
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new RedisUnavailableError(`${command} got no reply in ${timeoutMs} ms`, "timeout")), timeoutMs);
  });
  return Promise.race([reply, deadline]).then(
    (value) => {
      clearTimeout(timer);
      return value;
    },
    (error: unknown) => {
      clearTimeout(timer);
      // Ours, or a local fault (a RangeError building a huge argument): not the connection's.
      if (error instanceof CrawlsieveError || error instanceof RangeError || error instanceof TypeError) throw error;
      const name = (error as Error)?.constructor?.name ?? "";
      // Server replies ("ERR ...", "WRONGTYPE ...") arrive as ErrorReply; anything else is the connection.
      if (name === "ErrorReply" || name === "SimpleError" || name === "BlobError") throw new RedisReplyError(command, (error as Error).message);
      throw new RedisUnavailableError(command, error);
    },
  );
}
