// Option values from the command line, checked like every other input: a bad value is a typed
// error naming the option.
import { accessSync, constants, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { CrawlsieveError, InvalidArgumentError } from "../errors.js";

function required(name: string, expected: string): CrawlsieveError {
  return new CrawlsieveError("ERR_MISSING_OPTION", `--${name} is required: ${expected}`);
}

/** A probability from option text. */
export function probabilityOption(name: string, text: string | undefined, fallback?: number): number {
  if (text === undefined && fallback !== undefined) return fallback;
  if (text === undefined) throw required(name, "a number strictly between 0 and 1, e.g. 0.01");
  const value = Number(text);
  if (text.trim() === "" || !(value > 0 && value < 1)) {
    throw new InvalidArgumentError(`--${name}`, text, "a number strictly between 0 and 1");
  }
  return value;
}

/** A Jaccard threshold from --threshold text, in (0, 1]; 0.8 when absent. */
export function thresholdOption(text: string | undefined): number {
  if (text === undefined) return 0.8;
  const value = Number(text);
  if (text.trim() === "" || !(value > 0 && value <= 1))
    throw new InvalidArgumentError("--threshold", text, "a number greater than 0 and at most 1, e.g. 0.9");
  return value;
}

/** A positive integer from option text (1e6 and 1_000_000 style accepted). */
export function integerOption(name: string, text: string | undefined, min = 1, max = Number.MAX_SAFE_INTEGER): number {
  if (text === undefined) throw required(name, `an integer from ${min} to ${max}, e.g. 1e6`);
  const value = Number(text.replaceAll("_", ""));
  if (text.trim() === "" || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new InvalidArgumentError(`--${name}`, text, `an integer from ${min} to ${max}`);
  }
  return value;
}

/** A path the command will write at the end, checked now so a long run does not fail at its last step. */
export function writableFileOption(name: string, path: string): string {
  const parent = dirname(resolve(path));
  const stat = statSync(path, { throwIfNoEntry: false });
  if (stat?.isDirectory())
    throw new CrawlsieveError("ERR_NOT_WRITABLE", `--${name} ${path} is a directory; give a file path`);
  try {
    accessSync(stat === undefined ? parent : path, constants.W_OK);
  } catch {
    throw new CrawlsieveError(
      "ERR_NOT_WRITABLE",
      `--${name} ${path} cannot be written (${stat === undefined ? `no writable directory ${parent}` : "the file is not writable"})`,
    );
  }
  return path;
}

const UNITS: Record<string, number> = {
  b: 1,
  k: 2 ** 10,
  kb: 1e3,
  kib: 2 ** 10,
  m: 2 ** 20,
  mb: 1e6,
  mib: 2 ** 20,
  g: 2 ** 30,
  gb: 1e9,
  gib: 2 ** 30,
  t: 2 ** 40,
  tb: 1e12,
  tib: 2 ** 40,
};

/**
 * A byte size from option text: a number with an optional unit (512MiB, 8GiB, 1.5G, 2e9; K, M, G,
 * T are binary, as in sort -S), from `min` to 2^53 - 1 bytes (8 PiB: past it a count of bytes is
 * not exact); a value out of that range is refused with the range, too small or too large alike.
 */
export function bytesOption(name: string, text: string, min: number): number {
  const match = /^\s*(\d+(?:\.\d+)?(?:e\d+)?)\s*([a-z]*)\s*$/i.exec(text);
  const unit = match === null ? undefined : UNITS[(match[2] || "b").toLowerCase()];
  const value = match === null || unit === undefined ? NaN : Math.floor(Number(match[1]) * unit);
  if (!Number.isSafeInteger(value) || value < min) {
    const least = `${min / 2 ** 20} MiB`;
    const range =
      value > Number.MAX_SAFE_INTEGER
        ? `a size of at most 8 PiB (2^53 - 1 bytes; from ${least} up)`
        : value < min
          ? `a size of at least ${least} (up to 8 PiB)`
          : `a size from ${least} to 8 PiB`;
    throw new InvalidArgumentError(`--${name}`, text, `${range}, such as 512MiB or 8GiB`);
  }
  return value;
}
