// The process's stdout stream, made on first use only. Node's stream puts a pipe into non-blocking
// mode for good, while `dedup` writes its output straight to fd 1 from the thread pool
// (line-pipeline.ts), which wants the blocking pipe it was given: so nothing may touch
// process.stdout before it is needed.

let onError: ((error: NodeJS.ErrnoException) => void) | undefined;
let made = false;

/** Sets what a failed write through the stream does (main.ts: a closed reader ends the run quietly). */
export function handleStdoutErrors(handler: (error: NodeJS.ErrnoException) => void): void {
  onError = handler;
}

/** process.stdout, with the error handler attached the first time it is asked for. */
export function stdout(): NodeJS.WriteStream {
  if (!made) {
    made = true;
    if (onError !== undefined) process.stdout.on("error", onError);
  }
  return process.stdout;
}

/**
 * process.stdout for a command that hears its failed writes itself (every write confirmed, and
 * `handler` for the stream's error event) instead of through main.ts's handler, which ends the
 * process at once on EPIPE: `near-dups --dedup` still completes its --removed file then.
 */
export function ownStdout(handler: (error: NodeJS.ErrnoException) => void): NodeJS.WriteStream {
  if (made && onError !== undefined) process.stdout.off("error", onError);
  made = true;
  process.stdout.on("error", handler);
  return process.stdout;
}
