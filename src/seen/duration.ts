// Durations in specs ("7d") and the time-window geometry they imply.
import { InvalidArgumentError } from "../errors.js";
import type { Granularity } from "../window/granularity.js";

/** Milliseconds of a Duration (src/window/ttl-rules.ts, where durations of every window are read). */
export { durationMs } from "../window/ttl-rules.js";

const GRANULE_MS: Record<Granularity, number> = {
  minute: 60_000,
  hour: 3_600_000,
  day: 86_400_000,
  month: 30 * 86_400_000,
};

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
