// Argument checks shared by every public entry point; each throws InvalidArgumentError naming the value.
import { InvalidArgumentError } from "./errors.js";

/** A positive safe integer (items, counts, sizes). */
export function positiveInteger(name: string, value: unknown, max = Number.MAX_SAFE_INTEGER): number {
  return integerInRange(name, value, 1, max);
}

/** A safe integer from min to max. */
export function integerInRange(name: string, value: unknown, min: number, max: number): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new InvalidArgumentError(name, value, `an integer from ${min} to ${max}`);
  }
  return value;
}

/** A probability strictly between 0 and 1 (false-positive rates). */
export function probability(name: string, value: unknown): number {
  if (typeof value !== "number" || !(value > 0 && value < 1)) {
    throw new InvalidArgumentError(name, value, "a number strictly between 0 and 1");
  }
  return value;
}

/** An options object (or undefined, taken as empty). */
export function options<T extends object>(name: string, value: unknown): Partial<T> {
  if (value === undefined) return {};
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new InvalidArgumentError(name, value, "an options object");
  }
  return value as Partial<T>;
}

/** A key: a string or bytes. */
export function key(name: string, value: unknown): string | Uint8Array {
  if (typeof value === "string" || value instanceof Uint8Array) return value;
  throw new InvalidArgumentError(name, value, "a string or a Uint8Array");
}

/** An array of keys. */
export function keyList(name: string, value: unknown): readonly (string | Uint8Array)[] {
  if (!Array.isArray(value)) throw new InvalidArgumentError(name, value, "an array of strings or Uint8Arrays");
  return value;
}

/** Bytes plus an even-length list of (start, end) offsets into them. */
export function spans(data: unknown, spans: unknown): void {
  if (!(data instanceof Uint8Array)) throw new InvalidArgumentError("data", data, "a Uint8Array");
  if (
    spans === null ||
    typeof spans !== "object" ||
    typeof (spans as ArrayLike<number>).length !== "number" ||
    (spans as ArrayLike<number>).length % 2 !== 0
  ) {
    throw new InvalidArgumentError("spans", spans, "an even-length array of (start, end) byte offsets");
  }
}

/** One of a fixed set of values (a mode or rule name). */
export function oneOf<T>(name: string, value: unknown, allowed: readonly T[]): T {
  if (!allowed.includes(value as T))
    throw new InvalidArgumentError(name, value, `one of ${allowed.map((a) => JSON.stringify(a)).join(", ")}`);
  return value as T;
}
