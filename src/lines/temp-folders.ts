// The temporary folders line dedup makes on disk (a spill past the memory budget, long lines
// copied from a pipe): each is registered while it exists, so the command line removes whatever
// is left with one call at exit and on the signals that end a long run.
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";

/** Folders made and not removed yet. */
const live = new Set<string>();

/** Makes a folder `prefix`XXXXXX under `dir` and registers it. */
export function makeTempFolder(dir: string, prefix: string): string {
  const folder = mkdtempSync(join(dir, prefix));
  live.add(folder);
  return folder;
}

/** Removes a folder made by makeTempFolder, with what is left in it; idempotent. */
export function removeTempFolder(folder: string): void {
  rmSync(folder, { recursive: true, force: true });
  live.delete(folder);
}

/** Removes every folder still registered (at exit, or on a signal). */
export function removeTempFolders(): void {
  for (const folder of live) rmSync(folder, { recursive: true, force: true });
  live.clear();
}
