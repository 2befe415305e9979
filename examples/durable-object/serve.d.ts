// Types of serve.js, for the tests that import it.
/** A free loopback port. */
export function freePort(): Promise<number>;
/** A running workerd. */
export interface RunningWorkerd {
  /** Everything it printed so far. */
  output(): string;
  /** Stops it with `signal` (SIGTERM by default) and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: string | null }>;
}
/** Runs workerd on `dir`/config.capnp; resolves once it answers on `port`. */
export function startWorkerd(dir: string, port: number): Promise<RunningWorkerd>;
