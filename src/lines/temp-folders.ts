// The temporary folders the commands make on disk (dedup's spill past the memory budget and long
// lines copied from a pipe, near-dups' sketches): each is registered while it exists, so the command line removes whatever
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

/** Removes the folders still registered when the process exits, or ends on SIGINT (exit 130) or SIGTERM (143). */
export function removeTempFoldersAtExit(): void {
  process.once("exit", removeTempFolders);
  for (const [signal, code] of [["SIGINT", 130], ["SIGTERM", 143]] as const) {
    process.once(signal, () => {
      removeTempFolders();
      process.exit(code);
    });
  }
}

/** Removes every folder still registered (at exit, or on a signal). */
export function removeTempFolders(): void {
  for (const folder of live) rmSync(folder, { recursive: true, force: true });
  live.clear();
}
