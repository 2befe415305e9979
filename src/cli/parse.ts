// Option values from the command line, checked like every other input: a bad value is a typed
// error naming the option.
import { InvalidArgumentError } from "../errors.js";

/** A probability from option text. */
export function probabilityOption(name: string, text: string | undefined, fallback?: number): number {
  if (text === undefined && fallback !== undefined) return fallback;
  const value = Number(text);
  if (text === undefined || text.trim() === "" || !(value > 0 && value < 1)) {
    throw new InvalidArgumentError(`--${name}`, text, "a number strictly between 0 and 1");
  }
  return value;
}

/** A positive integer from option text (1e6 and 1_000_000 style accepted). */
export function integerOption(name: string, text: string | undefined, min = 1, max = Number.MAX_SAFE_INTEGER): number {
  const value = Number(text?.replaceAll("_", ""));
  if (text === undefined || text.trim() === "" || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new InvalidArgumentError(`--${name}`, text, `an integer from ${min} to ${max}`);
  }
  return value;
}
