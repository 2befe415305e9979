// In-memory seen-sets saved into Crawlee's key-value store on its persist-state events (every
// persistStateIntervalMillis, on migration and at the crawler's end), as Crawlee saves its own
// state, and read back when the sieve opens. Keys committed after the last save are not lost on
// a crash: the queue still holds their requests, and a later add of one is forwarded, found
// present by the queue and committed again.
import type { Configuration, KeyValueStore } from "@crawlee/core";
import { KeyValueStore as Store } from "./core.js";

/** Saves a seen-set's bytes under one record of a key-value store. */
export class SeenPersistence {
  private saving: Promise<void> = Promise.resolve();
  private listener: (() => void) | undefined;
  private snapshot: (() => Uint8Array | Promise<Uint8Array>) | undefined;

  private constructor(
    private readonly store: KeyValueStore,
    readonly record: string,
    private readonly config: Configuration,
  ) {}

  /** Opens the store (the default one unless `storeName` is given). */
  static async open(config: Configuration, record: string, storeName?: string): Promise<SeenPersistence> {
    const store = await Store.open(storeName ?? null, { config });
    return new SeenPersistence(store, record, config);
  }

  /** The bytes saved last, or undefined. */
  async load(): Promise<Uint8Array | undefined> {
    const value = await this.store.getValue<Uint8Array>(this.record);
    return value instanceof Uint8Array ? new Uint8Array(value.buffer, value.byteOffset, value.byteLength) : undefined;
  }

  /** Saves `snapshot()` on every persist-state event from now on. */
  attach(snapshot: () => Uint8Array | Promise<Uint8Array>): void {
    this.snapshot = snapshot;
    this.listener = () => void this.save().catch(() => undefined);
    this.config.getEventManager().on("persistState", this.listener);
  }

  /** Saves now (saves never overlap: each waits for the one before). */
  save(): Promise<void> {
    const snapshot = this.snapshot;
    if (snapshot === undefined) return this.saving;
    this.saving = this.saving
      .catch(() => undefined)
      .then(async () =>
        this.store.setValue(this.record, Buffer.from(await snapshot()), { contentType: "application/octet-stream" }),
      );
    return this.saving;
  }

  /** Stops listening; the last save is awaited. */
  async detach(): Promise<void> {
    if (this.listener !== undefined) this.config.getEventManager().off("persistState", this.listener);
    this.listener = undefined;
    await this.saving;
  }
}

/** A key-value store record name for a queue (the store allows letters, digits and !-_.'()). */
export function recordName(queue: unknown): string {
  const q = queue as { name?: unknown; id?: unknown };
  const label = typeof q.name === "string" && q.name !== "" ? q.name : typeof q.id === "string" ? q.id : "default";
  return `CRAWLSIEVE-SEEN-${label.replace(/[^a-zA-Z0-9!\-_.'()]/g, "_")}`.slice(0, 256);
}
