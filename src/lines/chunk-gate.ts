// How a line pipeline decides its chunks against a seen-set shared beyond the process (a store on
// disk): the pipeline (src/cli/line-pipeline.ts) asks, the store's gate (src/seen/disk/store-gate.ts) answers.

/**
 * What decides chunks against a seen-set shared beyond this process (dedup --store): `decide` runs
 * `work` (the deduplicator working one chunk) once the seen-set is up to date, and resolves once
 * the chunk's new lines are recorded; `durable()` resolves once they are on disk, and only then
 * are they written. `settle` waits for the write under way, before anything that may grow
 * WebAssembly memory.
 */
export interface ChunkGate {
  decide<T>(work: () => T | Promise<T>, settle: () => Promise<void>): Promise<T>;
  /** decide() for the lines that waited on disk past the memory budget, resolved at the end: `work` gives them all back (each durable before it is). */
  decideAll<T>(work: () => T | Promise<T>, settle: () => Promise<void>): Promise<T>;
  /** Resolves once the last decision's new lines are durable. */
  durable(): Promise<void>;
  /** Taken when output is handed over: a mark of what was recorded up to then (every batch but the last). */
  mark(): number;
  /** The output handed over with `mark` (Infinity: everything) is written: those lines are printed. */
  printed(mark: number): void;
}
