// The one thing crawlsieve needs from a Redis connection, single node or cluster: send a command,
// get its reply.

/** How a command is sent (used on a cluster; a single connection ignores it). */
export interface SendOptions {
  /** The key to route a keyless command by (SCRIPT LOAD, WAIT): it goes to that key's master. */
  readonly route?: string;
  /** Called when the command was sent again after its reply was lost: it may have run twice. */
  readonly ambiguous?: () => void;
  /** Never sent again, whatever fails: WAIT and CLIENT INFO answer for their own connection only. */
  readonly once?: boolean;
}

/** Sends one command (name first) and resolves with its reply. */
export type RedisSend = (args: readonly (string | Uint8Array)[], options?: SendOptions) => Promise<unknown>;

/** A Redis connection as crawlsieve uses it. */
export interface RedisCommander {
  readonly send: RedisSend;
  /** True for a Redis Cluster: new structures spread their shards over every master. */
  readonly cluster?: boolean;
  /** On a cluster: one key per master among `keys` (by the current slot map), to route a WAIT to each. */
  readonly mastersOf?: (keys: readonly string[]) => string[];
}
