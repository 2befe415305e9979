// The OPFS store of the browser seen-set: the file server (opfs-server.ts) called in this context
// when it is a dedicated worker, else in a dedicated worker started from a Blob URL of the
// server's own source (so no separate worker file has to be bundled or served).
import { opfsServer, opfsWorkerSource, type OpfsCommit, type OpfsServer } from "./opfs-server.js";
import type { BatchLog, LogRead, LogWrite } from "./batch-log.js";

/** The file server for this context: in place in a dedicated worker, else in a worker of its own; undefined when this context can start neither. */
export async function startOpfsServer(): Promise<{ server: OpfsServer; stop(): void } | undefined> {
  const here = opfsServer();
  if (await here.probe()) return { server: here, stop: () => undefined };
  if (
    typeof Worker !== "function" ||
    typeof URL.createObjectURL !== "function" ||
    typeof navigator.storage?.getDirectory !== "function"
  )
    return undefined;
  const url = URL.createObjectURL(new Blob([opfsWorkerSource()], { type: "text/javascript" }));
  let worker: Worker;
  try {
    worker = new Worker(url, { name: "crawlsieve seen-set (OPFS)" });
  } catch {
    // A Content-Security-Policy without `worker-src blob:` refuses the worker here, or as an error event below.
    URL.revokeObjectURL(url);
    return undefined;
  }
  const remote = new WorkerServer(worker);
  const usable = await remote.probe().catch(() => false);
  URL.revokeObjectURL(url);
  if (!usable) {
    worker.terminate();
    return undefined;
  }
  return { server: remote, stop: () => worker.terminate() };
}

/** The server's operations as messages to a worker running serveOpfs. */
class WorkerServer implements OpfsServer {
  private next = 1;
  private readonly waiting = new Map<number, { resolve(value: unknown): void; reject(error: unknown): void }>();

  constructor(private readonly worker: Worker) {
    worker.onmessage = ({ data }) => {
      const waiter = this.waiting.get(data.id);
      this.waiting.delete(data.id);
      if (data.error !== undefined) waiter?.reject(data.error);
      else waiter?.resolve(data.result);
    };
    // The worker did not start (refused by a policy, or its script failed): every call fails.
    worker.onerror = (event) => {
      event.preventDefault?.();
      for (const waiter of this.waiting.values())
        waiter.reject({ name: "WorkerError", message: event.message || "the OPFS worker did not start" });
      this.waiting.clear();
    };
  }

  probe(): Promise<boolean> {
    return this.call("probe", []);
  }

  begin(file: string, epoch: number, from: number) {
    return this.call<Awaited<ReturnType<OpfsServer["begin"]>>>("begin", [file, epoch, from]);
  }

  commit(change: OpfsCommit) {
    return this.call<Awaited<ReturnType<OpfsServer["commit"]>>>("commit", [change]);
  }

  close(): Promise<void> {
    return this.call("close", []);
  }

  private call<T>(op: string, args: unknown[]): Promise<T> {
    const id = this.next++;
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.worker.postMessage({ id, op, args });
    });
  }
}

/** The batches of one set in the OPFS file crawlsieve/`file`. */
export class OpfsLog implements BatchLog {
  readonly storage = "opfs" as const;
  readonly name = "the OPFS seen-set";
  readonly atomicWrites = false;
  /** The epoch and end of the file as this context last read or wrote it (0, 0: never). */
  private epoch = 0;
  private offset = 0;
  /** Where the bytes of the last read began. */
  private readFrom = 0;

  constructor(
    private readonly file: string,
    private readonly server: OpfsServer,
    private readonly stop: () => void,
  ) {}

  async read(): Promise<LogRead> {
    const got = await this.server.begin(this.file, this.epoch, this.offset);
    const reset = got.epoch !== this.epoch || got.from !== this.offset;
    this.epoch = got.epoch;
    this.readFrom = got.from;
    this.offset = got.from + got.bytes.length;
    return { reset, records: got.bytes };
  }

  async write(change: LogWrite): Promise<void> {
    let done: { size: number; epoch: number };
    try {
      done = await this.server.commit({
        truncate: change.keep === undefined ? undefined : this.readFrom + change.keep,
        reset: change.clear,
        append: change.append,
      });
    } catch (error) {
      // What this context knows of the file is unsure now: the next read takes it whole.
      this.epoch = 0;
      this.offset = 0;
      throw error;
    }
    this.epoch = done.epoch;
    this.offset = done.size;
  }

  async abort(): Promise<void> {
    // Closes the handle; an error here would hide the one that made the caller abort.
    await this.server.commit({}).catch(() => undefined);
    this.offset = 0;
    this.epoch = 0;
  }

  async close(): Promise<void> {
    // The handle kept open between calls goes first, so the file is free for others at once.
    await this.server.close().catch(() => undefined);
    this.stop();
  }
}
