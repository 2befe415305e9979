// Types of build.js, for the tests that import it.
/** Writes worker.js, crawlsieve.wasm and config.capnp into `out`; objects persist in `storage`. */
export function buildDurableWorker(options: { out: string; storage: string; port?: number; entry?: string; classes?: string[] }): Promise<void>;
/** The workerd configuration: SQLite-backed objects on local disk in `storage`, served on `port`. */
export function config(storage: string, port: number, extraClasses?: string[]): string;
