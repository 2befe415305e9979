// Typed errors: every failure a caller can provoke carries a stable `code` and names the bad value.

/** Base class of every error crawlsieve throws on purpose. */
export class CrawlsieveError extends Error {
  /** Stable machine-readable code, e.g. ERR_INVALID_ARGUMENT. */
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.name = new.target.name;
    this.code = code;
  }
}

/** An argument is out of range or of the wrong type; `argument` names it, `value` holds it. */
export class InvalidArgumentError extends CrawlsieveError {
  readonly argument: string;
  readonly value: unknown;
  constructor(argument: string, value: unknown, expected: string) {
    super("ERR_INVALID_ARGUMENT", `${argument} must be ${expected}, got ${describe(value)}`);
    this.argument = argument;
    this.value = value;
  }
}

/** Serialized bytes are not a valid crawlsieve structure (bad magic, bad parameters, wrong kind). */
export class FormatError extends CrawlsieveError {
  constructor(message: string, code = "ERR_FORMAT") {
    super(code, message);
  }
}

/** Serialized bytes end before the structure they declare. */
export class TruncatedInputError extends FormatError {
  constructor(expected: number, actual: number) {
    super(`serialized input is truncated: expected ${expected} bytes, got ${actual}`, "ERR_TRUNCATED");
  }
}

/** Serialized bytes fail their checksum: they were corrupted after being written. */
export class ChecksumMismatchError extends FormatError {
  constructor(expected: bigint, actual: bigint) {
    super(
      `checksum mismatch: stored 0x${expected.toString(16).padStart(16, "0")}, computed 0x${actual.toString(16).padStart(16, "0")}`,
      "ERR_CHECKSUM",
    );
  }
}

/** Serialized bytes use a format version this build does not read. */
export class UnsupportedVersionError extends FormatError {
  readonly version: number;
  constructor(version: number, supported: number) {
    super(`unsupported format version ${version} (this build reads version ${supported})`, "ERR_UNSUPPORTED_VERSION");
    this.version = version;
  }
}

/** A structure would need more memory than this platform can give one object. */
export class FilterTooLargeError extends CrawlsieveError {
  readonly bytes: number;
  constructor(bytes: number, reason: string) {
    super("ERR_TOO_LARGE", `a structure of ${bytes} bytes is too large: ${reason}`);
    this.bytes = bytes;
  }
}

/** The WebAssembly module was used before init() (or initSync()) finished. */
export class NotInitializedError extends CrawlsieveError {
  constructor() {
    super("ERR_NOT_INITIALIZED", "crawlsieve is not initialised: await init() first (Node also offers initSync())");
  }
}

/** A structure was used after dispose(). */
export class DisposedError extends CrawlsieveError {
  constructor(what: string) {
    super("ERR_DISPOSED", `${what} was used after dispose()`);
  }
}

/** The browser's storage quota for this origin is full: the batch was not written, and none of its keys were reported new. */
export class StorageQuotaError extends CrawlsieveError {
  constructor(what: string, cause: unknown) {
    const message = (cause as { message?: unknown } | undefined)?.message;
    super(
      "ERR_QUOTA",
      `the storage quota is full (${what})${typeof message === "string" && message !== "" ? `: ${message}` : ""}; nothing of the batch was kept`,
    );
    // The browser's own error (a DOMException named QuotaExceededError).
    Object.defineProperty(this, "cause", { value: cause, enumerable: false });
  }
}

function describe(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value.length > 80 ? value.slice(0, 80) + "…" : value);
  if (typeof value === "bigint") return `${value}n`;
  if (value instanceof Uint8Array) return `Uint8Array(${value.length})`;
  if (Array.isArray(value)) return `array(${value.length})`;
  if (value === null || typeof value !== "object") return String(value);
  return Object.prototype.toString.call(value);
}

/** Redis did not answer: the connection is gone, refused, or a command timed out. Nothing is assumed done. */
export class RedisUnavailableError extends CrawlsieveError {
  constructor(what: string, cause: unknown) {
    super(
      "ERR_REDIS_UNAVAILABLE",
      `Redis is unavailable (${what}): ${cause instanceof Error ? cause.message : String(cause)}`,
    );
    // The error the client reported.
    Object.defineProperty(this, "cause", { value: cause, enumerable: false });
  }
}

/** Writing the command's output (or the file `where` names, "--removed FILE") failed (a full disk, a closed device): nothing after the failed write was written. */
export class OutputError extends CrawlsieveError {
  constructor(cause: unknown, where = "output") {
    const code = (cause as { code?: string })?.code;
    const message = cause instanceof Error ? cause.message : String(cause);
    super(
      "ERR_OUTPUT",
      `cannot write ${where}: ${code !== undefined && !message.startsWith(code) ? `${code}: ` : ""}${message}`,
    );
    Object.defineProperty(this, "cause", { value: cause, enumerable: false });
  }
}

/** A store ran out of disk space while writing; what it acknowledged before stays. */
export class StoreFullError extends CrawlsieveError {
  constructor(where: string, cause: unknown) {
    super(
      "ERR_STORE_FULL",
      `the disk of the store ${where} is full (${cause instanceof Error ? cause.message : String(cause)}); free space or move the store; what was printed before stays seen`,
    );
    Object.defineProperty(this, "cause", { value: cause, enumerable: false });
  }
}

/** A line longer than a command reads whole (a URL, a record); `where` is "file:line", `what` says whose limit it is. */
export class LineTooLongError extends CrawlsieveError {
  readonly where: string;
  readonly limit: number;
  constructor(where: string, limit: number, what: string) {
    super(
      "ERR_LINE_TOO_LONG",
      `${where}: the line is longer than ${limit >= 1 << 20 && limit % (1 << 20) === 0 ? `${limit / (1 << 20)} MiB` : `${limit} bytes`}, the limit of ${what}`,
    );
    this.where = where;
    this.limit = limit;
  }
}
