// Reads a sync or async iterable of requests in chunks, lazily: a ten-million-line seed file
// passed to crawler.run() is never held whole, as Crawlee's own addRequestsBatched avoids too.

/** Pulls up to `n` items at a time; an empty array means the input is exhausted. */
export interface ChunkReader<T> {
  next(n: number): Promise<T[]>;
  /** Everything left (for the budget's leftovers). */
  rest(): Promise<T[]>;
}

/** A chunk reader over an array, an iterable or an async iterable. */
export function chunkReader<T>(input: Iterable<T> | AsyncIterable<T>): ChunkReader<T> {
  if (Array.isArray(input)) {
    let at = 0;
    return {
      next: async (n) => input.slice(at, (at += n)),
      rest: async () => input.slice(at, (at = input.length)),
    };
  }
  const sync = Symbol.iterator in input ? (input as Iterable<T>)[Symbol.iterator]() : undefined;
  const async = sync === undefined ? (input as AsyncIterable<T>)[Symbol.asyncIterator]() : undefined;
  let done = false;
  const next = async (n: number) => {
    const out: T[] = [];
    while (!done && out.length < n) {
      const step = sync !== undefined ? sync.next() : await async!.next();
      if (step.done) done = true;
      else out.push(step.value);
    }
    return out;
  };
  return { next, rest: () => next(Infinity) };
}

/** True for what chunkReader reads. */
export function isIterable(value: unknown): value is Iterable<unknown> | AsyncIterable<unknown> {
  return value !== null && typeof value === "object" && (Symbol.iterator in value || Symbol.asyncIterator in value);
}
