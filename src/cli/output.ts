// Writes to stdout with backpressure: nothing is buffered without bound, and a write is awaited
// when the stream asks for it.
import type { Writable } from "node:stream";

/** A sink of byte pieces that respects backpressure. */
export class Output {
  private pending: Uint8Array[] = [];
  private size = 0;

  constructor(private readonly stream: Writable = process.stdout, private readonly flushAt = 1 << 16) {}

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
    const chunk = Buffer.concat(this.pending, this.size);
    this.pending = [];
    this.size = 0;
    if (!this.stream.write(chunk)) await new Promise<void>((resolve, reject) => {
      const onError = (error: Error) => reject(error);
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
    await new Promise<void>((resolve, reject) => this.stream.write("", (error) => (error ? reject(error) : resolve())));
  }
}
