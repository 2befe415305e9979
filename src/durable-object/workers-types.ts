// The few Cloudflare Workers types the Durable Object seen-set touches, written structurally so
// the package needs no @cloudflare/workers-types: the runtime's real objects satisfy them.

/** A row cursor of `ctx.storage.sql.exec` (iterable; BLOB columns come back as ArrayBuffer). */
export interface SqlCursor extends Iterable<Record<string, unknown>> {
  /** Every row, as objects keyed by column name. */
  toArray(): Record<string, unknown>[];
  /** The one row the query returns (throws otherwise). */
  one(): Record<string, unknown>;
}

/** `ctx.storage.sql` of a SQLite-backed Durable Object. */
export interface SqlStorage {
  /** Runs one statement with bound values. */
  exec(query: string, ...bindings: unknown[]): SqlCursor;
}

/** The `ctx` (DurableObjectState) a Durable Object's constructor receives. */
export interface DurableObjectContext {
  /** The object's storage; only the SQL API and synchronous transactions are used. */
  readonly storage: {
    readonly sql: SqlStorage;
    /** Runs `body` as one SQLite transaction (used to merge rows). */
    transactionSync<T>(body: () => T): T;
  };
  /** Holds every event until `body` settles (used to load the table at start). */
  blockConcurrencyWhile<T>(body: () => Promise<T>): Promise<T>;
}

/** A stub of one Durable Object. */
export interface DurableObjectStubLike {
  /** Sends a request to the object. */
  fetch(input: string, init?: RequestInit): Promise<Response>;
}

/** A Durable Object namespace binding (`env.SEEN`). */
export interface DurableObjectNamespaceLike {
  /** The id of the object with this name. */
  idFromName(name: string): unknown;
  /** A stub for an id. */
  get(id: never): DurableObjectStubLike;
}
