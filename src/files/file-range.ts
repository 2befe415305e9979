// Reading and writing a range of a file whole: readSync and writeSync may move fewer bytes than
// asked (a signal, a pipe, a network file system), so every reader and writer of a block loops
// until it is done; these are those loops, and each caller says in its own words what a short
// read means.
import { readSync, writeSync } from "node:fs";

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

/** Writes all of `bytes` to `fd` at byte `position`, or where the file's offset is when there is none (an append). */
export function writeAt(fd: number, bytes: Uint8Array, position?: number): void {
  for (let at = 0; at < bytes.length; )
    at += writeSync(fd, bytes, at, bytes.length - at, position === undefined ? null : position + at);
}
