// Calendar granules in UTC: a granule is one minute, hour, day or calendar month, numbered from
// the Unix epoch, so "the same granule" means the same UTC minute, hour, day or month.
import { InvalidArgumentError } from "../errors.js";

/** How long one slice of a time window lasts. */
export type Granularity = "minute" | "hour" | "day" | "month";

const FIXED: Record<Exclude<Granularity, "month">, number> = { minute: 60_000, hour: 3_600_000, day: 86_400_000 };
/** Codes used in the serialized form. */
export const GRANULARITY_CODES: Record<Granularity, number> = { minute: 1, hour: 2, day: 3, month: 4 };

/** Checks a granularity name. */
export function granularity(value: unknown): Granularity {
  if (value === "minute" || value === "hour" || value === "day" || value === "month") return value;
  throw new InvalidArgumentError("granularity", value, '"minute", "hour", "day" or "month"');
}

/** The granule holding time `ms` (milliseconds since the epoch, UTC). */
export function granuleOf(unit: Granularity, ms: number): number {
  if (unit !== "month") return Math.floor(ms / FIXED[unit]);
  const date = new Date(ms);
  return (date.getUTCFullYear() - 1970) * 12 + date.getUTCMonth();
}

/** When granule `g` begins, in milliseconds since the epoch. */
export function granuleStart(unit: Granularity, g: number): number {
  if (unit !== "month") return g * FIXED[unit];
  return Date.UTC(1970 + Math.floor(g / 12), ((g % 12) + 12) % 12, 1);
}
