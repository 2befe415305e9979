// Progress on stderr, only when stderr is a terminal: a single line redrawn a few times a second.

/** A throttled progress line. */
export class Progress {
  private last = -Infinity;
  private shown = false;
  private readonly enabled: boolean;

  constructor(enabled = process.stderr.isTTY === true) {
    this.enabled = enabled;
  }

  /** Redraws the line with `text` at most every 200 ms. */
  update(text: () => string): void {
    if (!this.enabled) return;
    const now = performance.now();
    if (now - this.last < 200) return;
    this.last = now;
    this.shown = true;
    process.stderr.write(`\r\x1b[K${text()}`);
  }

  /** Clears the line. */
  done(): void {
    if (this.enabled && this.shown) process.stderr.write("\r\x1b[K");
  }
}

/** A count with thousands separators. */
export function count(n: number): string {
  return Math.round(n).toLocaleString("en-US");
}
