// The file side of the browser seen-set: one file in the Origin Private File System, read and
// appended through a FileSystemSyncAccessHandle, which browsers offer only in dedicated workers.
// Everything here is one self-contained function (no imports, no outer names) because its source
// text is also what the seen-set starts as a worker from a Blob URL: that way the worker ships
// inside any bundle of the package, with no worker file for a bundler to find and emit.
//
// The caller holds the Web Lock of the set's name around begin ... commit, so one context at a
// time reads or writes the file. Where the browser offers sync access handles in mode
// "readwrite-unsafe" (Chromium 121 on), several contexts may hold one, so the handle stays open
// from call to call (opening and closing one costs about 7 ms a batch, measured in Chromium 156);
// elsewhere a handle is exclusive, and it is closed after each call so other contexts can open it.

/** What begin() answers: the file's epoch and the bytes appended after `from` (all records when the epoch changed). */
export interface OpfsBegin {
  /** Changes when the file is cleared or created: a context holding another epoch reloads. */
  readonly epoch: number;
  /** Offset of `bytes` in the file. */
  readonly from: number;
  readonly bytes: Uint8Array;
}

/** What commit() does, in order: truncate (a torn tail), reset (clear, new epoch), append a record; then flush and close. */
export interface OpfsCommit {
  readonly truncate?: number;
  readonly reset?: boolean;
  readonly append?: Uint8Array;
}

/** What is used of a FileSystemSyncAccessHandle (TypeScript's DOM library types it only for workers). */
interface SyncHandle {
  /** "readwrite-unsafe" where modes exist and that one was granted; undefined where they do not. */
  readonly mode?: string;
  read(buffer: Uint8Array, options: { at: number }): number;
  write(buffer: Uint8Array, options: { at: number }): number;
  truncate(size: number): void;
  getSize(): number;
  flush(): void;
  close(): void;
}

/** A file handle that can open a sync access handle (in a dedicated worker). */
type SyncableFile = FileSystemFileHandle & {
  createSyncAccessHandle(options?: { mode: "readwrite-unsafe" }): Promise<SyncHandle>;
};

/** The operations on one set's file. */
export interface OpfsServer {
  /** Opens the file (creating it with a header) and reads what was appended since `from` in epoch `epoch`. */
  begin(file: string, epoch: number, from: number): Promise<OpfsBegin>;
  /** Applies the commit, flushes, closes the handle; the file's size and epoch after it. A failed append is cut off again before the error is rethrown. */
  commit(change: OpfsCommit): Promise<{ size: number; epoch: number }>;
  /** Whether this context can use sync access handles (a dedicated worker with OPFS). */
  probe(): Promise<boolean>;
  /** Closes the handle kept open between calls, if any. */
  close(): Promise<void>;
}

/**
 * The server (self-contained: it is also stringified into the worker). File layout: a 16-byte
 * header (magic "CSFL", version 1, fingerprint scheme 1 = XXH3-128, epoch u32, 4 reserved bytes),
 * then records (see fingerprint-batches.ts).
 */
export function opfsServer(): OpfsServer {
  const HEADER = 16;
  const MAGIC = 0x4c465343; // "CSFL"
  const VERSION = 1;
  const SCHEME = 1;
  /** The handle open between begin and commit (and kept open after, when `shared`). */
  let handle: SyncHandle | undefined;
  /** The file the handle is open on. */
  let open: string | undefined;
  /** True when the handle is not exclusive (mode "readwrite-unsafe"): it may stay open between calls. */
  let shared = false;
  /** The epoch of the file open. */
  let epoch = 0;
  const fail = (code: string, message: string) =>
    Object.assign(new Error(message), { name: "CrawlsieveStorageError", code });
  const writeHeader = (h: SyncHandle, value: number) => {
    const head = new DataView(new ArrayBuffer(HEADER));
    head.setUint32(0, MAGIC, true);
    head.setUint16(4, VERSION, true);
    head.setUint16(6, SCHEME, true);
    head.setUint32(8, value, true);
    h.truncate(0);
    h.write(new Uint8Array(head.buffer), { at: 0 });
  };
  const newEpoch = (old: number) => {
    let next = old;
    while (next === old || next === 0) next = crypto.getRandomValues(new Uint32Array(1))[0];
    return next;
  };
  const close = () => {
    handle?.close();
    handle = undefined;
    open = undefined;
  };
  return {
    async probe() {
      return (
        typeof navigator.storage?.getDirectory === "function" &&
        typeof FileSystemFileHandle !== "undefined" &&
        typeof (FileSystemFileHandle.prototype as Partial<SyncableFile>).createSyncAccessHandle === "function"
      );
    },
    async close() {
      close();
    },
    async begin(file, known, from) {
      if (!shared || open !== file) {
        close();
        const root = await navigator.storage.getDirectory();
        const dir = await root.getDirectoryHandle("crawlsieve", { create: true });
        const fileHandle = (await dir.getFileHandle(file, { create: true })) as SyncableFile;
        // Browsers without modes ignore the option and grant an exclusive handle (mode undefined).
        handle = await fileHandle.createSyncAccessHandle({ mode: "readwrite-unsafe" });
        shared = handle.mode === "readwrite-unsafe";
        open = file;
      }
      try {
        if (handle === undefined) throw fail("ERR_STATE", "no handle");
        const h = handle;
        let size = h.getSize();
        // A header cut short (the browser stopped while creating the file) holds no keys: start the file again.
        if (size < HEADER) {
          writeHeader(h, newEpoch(0));
          h.flush();
          size = HEADER;
        }
        const head = new DataView(new ArrayBuffer(HEADER));
        h.read(new Uint8Array(head.buffer), { at: 0 });
        if (head.getUint32(0, true) !== MAGIC)
          throw fail("ERR_FORMAT", `OPFS file crawlsieve/${file} is not a crawlsieve seen-set (bad magic)`);
        if (head.getUint16(4, true) !== VERSION)
          throw fail(
            "ERR_UNSUPPORTED_VERSION",
            `OPFS file crawlsieve/${file} has format version ${head.getUint16(4, true)}; this build reads ${VERSION}`,
          );
        if (head.getUint16(6, true) !== SCHEME)
          throw fail(
            "ERR_BAD_PARAMS",
            `OPFS file crawlsieve/${file} uses fingerprint scheme ${head.getUint16(6, true)}; this build knows ${SCHEME}`,
          );
        epoch = head.getUint32(8, true);
        const start = epoch === known && from >= HEADER && from <= size ? from : HEADER;
        const bytes = new Uint8Array(size - start);
        if (bytes.length > 0) h.read(bytes, { at: start });
        return { epoch, from: start, bytes };
      } catch (error) {
        close();
        throw error;
      }
    },
    async commit(change) {
      const h = handle;
      if (h === undefined) throw fail("ERR_STATE", "commit without begin");
      try {
        if (change.truncate !== undefined) h.truncate(change.truncate);
        if (change.reset === true) {
          epoch = newEpoch(epoch);
          writeHeader(h, epoch);
        }
        if (change.append !== undefined && change.append.length > 0) {
          const at = h.getSize();
          try {
            const wrote = h.write(change.append, { at });
            if (wrote !== change.append.length)
              throw fail("ERR_SHORT_WRITE", `wrote ${wrote} of ${change.append.length} bytes`);
            h.flush();
          } catch (error) {
            // Nothing of a failed batch may stay behind to be read as keys later.
            h.truncate(at);
            h.flush();
            throw error;
          }
        } else if (change.truncate !== undefined || change.reset === true) {
          h.flush();
        }
        return { size: h.getSize(), epoch };
      } finally {
        if (!shared) close();
      }
    },
  };
}

/** The worker's message loop around opfsServer (self-contained, stringified with it): requests { id, op, args }, answers { id, result } or { id, error }. */
export function serveOpfs(
  scope: { onmessage: ((event: MessageEvent) => void) | null; postMessage(message: unknown): void },
  server: OpfsServer,
): void {
  let queue: Promise<unknown> = Promise.resolve();
  scope.onmessage = ({ data }) => {
    // One operation at a time, in the order they came.
    queue = queue.then(async () => {
      try {
        const ops = server as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
        scope.postMessage({ id: data.id, result: await ops[data.op](...data.args) });
      } catch (error) {
        const e = error as { name?: string; message?: string; code?: string };
        scope.postMessage({
          id: data.id,
          error: { name: e?.name ?? "Error", message: e?.message ?? String(error), code: e?.code },
        });
      }
    });
  };
}

/** The worker's source: both functions above, as text, started on the worker's global scope. */
export function opfsWorkerSource(): string {
  return `"use strict";\n(${serveOpfs.toString()})(self, (${opfsServer.toString()})());\n`;
}
