// Writes to stdout with backpressure: nothing is buffered without bound, and a write is awaited
// when the stream asks for it. A failed write is an OutputError. With `confirm` every flush waits
// until its bytes reached the OS (or failed), so a caller that commits a batch as seen before
// printing it never commits the next one while the previous print may still fail.
import type { Writable } from "node:stream";
import { OutputError } from "../errors.js";
import { stdout } from "./stdout.js";

/** A sink of byte pieces that respects backpressure. */
export class Output {
  private pending: Uint8Array[] = [];
  private size = 0;

  constructor(
    private readonly stream: Writable = stdout(),
    private readonly flushAt = 1 << 16,
    private readonly confirm = false,
    /** What a failed write names (OutputError): "output", or "--removed FILE". */ private readonly where = "output",
  ) {}

  /** Queues bytes; call flush() (awaited) regularly. */
  push(bytes: Uint8Array): void {
    this.pending.push(bytes);
    this.size += bytes.length;
  }

  /** True when enough is queued to be worth a write. */
  get full(): boolean {
    return this.size >= this.flushAt;
  }

  /** Writes what is queued, waiting for the stream to drain when it is full. */
  async flush(): Promise<void> {
    if (this.size === 0) return;
    // One piece (a long line, say) goes out as it is, not copied again.
    const chunk = this.pending.length === 1 ? this.pending[0] : Buffer.concat(this.pending, this.size);
    this.pending = [];
    this.size = 0;
    if (this.confirm) return this.written(chunk);
    if (!this.stream.write(chunk))
      await new Promise<void>((resolve, reject) => {
        const onError = (error: Error) => reject(new OutputError(error, this.where));
        this.stream.once("error", onError);
        this.stream.once("drain", () => {
          this.stream.off("error", onError);
          resolve();
        });
      });
  }

  /** Flushes and waits until the stream has handed everything to the OS. */
  async end(): Promise<void> {
    await this.flush();
    await this.written("");
  }

  private written(chunk: Uint8Array | string): Promise<void> {
    return new Promise<void>((resolve, reject) =>
      this.stream.write(chunk, (error) => (error ? reject(new OutputError(error, this.where)) : resolve())),
    );
  }
}
