// Reading a range of a file whole: readSync may return fewer bytes than asked (a signal, a pipe,
// a network file system), so every reader of a block at an offset loops until the block is full
// or the file ends; this is that loop, and each caller says in its own words what a short read means.
import { readSync } from "node:fs";

/** Reads into `into` from byte `position` of `fd` until it is full or the file ends; returns the bytes read (fewer than asked only at the end of the file). */
export function readAt(fd: number, into: Uint8Array, position: number): number {
  let n = 0;
  while (n < into.length) {
    const got = readSync(fd, into, n, into.length - n, position + n);
    if (got === 0) break;
    n += got;
  }
  return n;
}
