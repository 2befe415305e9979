// Durations in specs ("7d") and the time-window geometry they imply.
import { InvalidArgumentError } from "../errors.js";
import type { Granularity } from "../window/granularity.js";
import type { Duration } from "./seen-spec.js";

const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;
const GRANULE_MS: Record<Granularity, number> = {
  minute: 60_000,
  hour: 3_600_000,
  day: 86_400_000,
  month: 30 * 86_400_000,
};

/** Milliseconds of a Duration: a positive number of ms, or "<number><s|m|h|d|w>". */
export function durationMs(name: string, value: Duration | unknown): number {
  if (typeof value === "number" && Number.isFinite(value) && value > 0) return value;
  const match = typeof value === "string" ? /^(\d+(?:\.\d+)?)([smhdw])$/.exec(value) : null;
  const ms = match === null ? NaN : Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
  if (!(ms > 0))
    throw new InvalidArgumentError(
      name,
      value,
      'a positive duration: milliseconds, or a number with a unit s, m, h, d or w ("7d")',
    );
  return ms;
}

/**
 * The ring for a window: L slices of one granule, with L granules equal to the window, so a key
 * comes back between one slice short of the window and the window (TimeWindowFilter's bound). The
 * granule is the coarsest of month (30 days), day, hour and minute that divides the window into at
 * least 4 slices (else the coarsest that divides it), unless one is given. A window that no
 * granule divides (under a minute, 90 s) is refused: rounding it kept "30s" for 60 s.
 * `value` is the window as the caller wrote it, for the error.
 */
export function windowRing(
  windowMs: number,
  given?: Granularity,
  maxSlices = 100_000,
  value: unknown = windowMs,
): { granularity: Granularity; slices: number } {
  const order: Granularity[] = ["month", "day", "hour", "minute"];
  const whole = (g: Granularity) => Number.isInteger(windowMs / GRANULE_MS[g]);
  const granularity = given ?? order.find((g) => whole(g) && windowMs / GRANULE_MS[g] >= 4) ?? order.find(whole);
  if (granularity === undefined || !whole(granularity)) {
    const unit = granularity ?? "minute";
    throw new InvalidArgumentError(
      "window",
      value,
      `a whole number of ${unit}s (the ${given === undefined ? "finest " : ""}slice length), so a key is kept between one slice short of the window and the window`,
    );
  }
  const slices = windowMs / GRANULE_MS[granularity];
  if (slices > maxSlices) {
    throw new InvalidArgumentError(
      "window",
      value,
      `at most ${maxSlices.toLocaleString("en-US")} slices; this window is ${slices.toLocaleString("en-US")} ${granularity}s (a coarser granularity or a shorter window fits)`,
    );
  }
  return { granularity, slices };
}
