// Durations in specs ("7d") and the time-window geometry they imply.
import { InvalidArgumentError } from "../errors.js";
import type { Granularity } from "../window/granularity.js";
import type { Duration } from "./seen-spec.js";

const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;
const GRANULE_MS: Record<Granularity, number> = { minute: 60_000, hour: 3_600_000, day: 86_400_000, month: 30 * 86_400_000 };

/** Milliseconds of a Duration: a positive number of ms, or "<number><s|m|h|d|w>". */
export function durationMs(name: string, value: Duration | unknown): number {
  if (typeof value === "number" && Number.isFinite(value) && value > 0) return value;
  const match = typeof value === "string" ? /^(\d+(?:\.\d+)?)([smhdw])$/.exec(value) : null;
  const ms = match === null ? NaN : Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
  if (!(ms > 0)) throw new InvalidArgumentError(name, value, 'a positive duration: milliseconds, or a number with a unit s, m, h, d or w ("7d")');
  return ms;
}

/**
 * The ring for a window: the coarsest granule that still cuts it into at least 4 slices (a key
 * comes back between window - granule and window after it was seen), unless one is given.
 */
export function windowRing(windowMs: number, given?: Granularity): { granularity: Granularity; slices: number } {
  const order: Granularity[] = ["month", "day", "hour", "minute"];
  const granularity = given ?? order.find((g) => windowMs / GRANULE_MS[g] >= 4) ?? "minute";
  const slices = Math.max(1, Math.round(windowMs / GRANULE_MS[granularity]));
  if (slices > 100_000) throw new InvalidArgumentError("window", windowMs, `at most 100,000 ${granularity}s`);
  return { granularity, slices };
}
