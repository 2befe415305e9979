// What every Redis adapter shares: arguments as node-redis takes them, and replies and failures
// as crawlsieve reports them (a reply error names the command; a connection that went away, or a
// command with no reply by its deadline, is RedisUnavailableError; local faults stay local).
import { CrawlsieveError, RedisUnavailableError } from "../errors.js";

/** RESP bulk strings ("$"): mapped to Buffers, so bitmaps and binary fields survive intact (node-redis decodes them as UTF-8 text by default). */
export const BLOB_STRING = 36;

/** Arguments as node-redis takes them: strings as they are, bytes as Buffers over the same memory. */
export function toBuffers(args: readonly (string | Uint8Array)[]): (string | Buffer)[] {
  return args.map((a) => (typeof a === "string" ? a : Buffer.from(a.buffer, a.byteOffset, a.byteLength)));
}

/** A reply error from Redis itself (the server answered, the command failed). */
export class RedisReplyError extends CrawlsieveError {
  constructor(command: string, message: string) {
    super("ERR_REDIS_REPLY", `Redis refused ${command}: ${message}`);
  }
}

/** Runs a command with a deadline, mapping its failure as mapReplyError does. */
export function withDeadline(call: () => Promise<unknown>, timeoutMs: number, command: string): Promise<unknown> {
  // A client that throws instead of rejecting still gets its error mapped below.
  let reply: Promise<unknown>;
  try {
    reply = call();
  } catch (error) {
    reply = Promise.reject(error);
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new RedisUnavailableError(`${command} got no reply in ${timeoutMs} ms`, "timeout")),
      timeoutMs,
    );
  });
  return Promise.race([reply, deadline]).then(
    (value) => {
      clearTimeout(timer);
      return value;
    },
    (error: unknown) => {
      clearTimeout(timer);
      throw mapReplyError(command, error);
    },
  );
}

/** A client's error as crawlsieve reports it: a reply (ErrorReply) is a RedisReplyError; ours and local faults stay as they are; anything else is the connection. */
export function mapReplyError(command: string, error: unknown): Error {
  // Ours, or a local fault (a RangeError building a huge argument): not the connection's.
  if (error instanceof CrawlsieveError || error instanceof RangeError || error instanceof TypeError) return error;
  const name = (error as Error)?.constructor?.name ?? "";
  // Server replies ("ERR ...", "WRONGTYPE ...") arrive as ErrorReply; anything else is the connection.
  if (name === "ErrorReply" || name === "SimpleError" || name === "BlobError")
    return new RedisReplyError(command, (error as Error).message);
  return new RedisUnavailableError(command, error);
}

/** Waits before retry `attempt` (0, 1, ...): 50 ms doubling to at most a second, the pace a cluster in motion settles at. */
export function backoff(attempt: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.min(1_000, 50 * 2 ** attempt)));
}
