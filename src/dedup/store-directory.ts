// A store's directory, made ready before anything is opened in it.
import { existsSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import { join, resolve, sep } from "node:path";
import { CrawlsieveError } from "../errors.js";

/** Creates the store's directory (and its parents) and refuses, by name, a path that is not a writable directory. */
export function prepareDirectory(dir: string): void {
  try {
    // Parents first, one level at a time. Another process may make one between a check and a
    // mkdir: EEXIST is that, not an error. (Not { recursive: true }: Node 20 loops forever on it under /proc.)
    const absolute = resolve(dir);
    const levels = absolute.split(sep).filter(Boolean);
    for (let i = 1; i <= levels.length; i++) {
      const level = sep + levels.slice(0, i).join(sep);
      if (existsSync(level)) continue;
      try {
        mkdirSync(level);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
    }
    if (!statSync(dir).isDirectory()) throw new Error("not a directory");
    writeFileSync(join(dir, ".crawlsieve-write-test"), "");
  } catch (error) {
    throw new CrawlsieveError("ERR_STORE", `the store directory ${JSON.stringify(dir)} cannot be used: ${(error as Error).message}`);
  }
}

