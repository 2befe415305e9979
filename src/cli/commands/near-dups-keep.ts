// Which record of a cluster `near-dups --dedup` keeps (--keep): the first, the longest text, or the
// largest or smallest number in a member of the record (max:FIELD, min:FIELD: a quality score).
// A rule is an order on records; clusters are formed with the records taken in that order, so the
// record kept is the first of its cluster in it and every removed one is within J of it. Ties go
// to the earlier record, so the same input always keeps the same records.
import { InvalidArgumentError } from "../../errors.js";

/** A --keep rule: `field` is the JSON member that max and min read. */
export type KeepRule =
  | { readonly kind: "first" }
  | { readonly kind: "longest" }
  | { readonly kind: "max" | "min"; readonly field: string };

/** The --keep value as a rule; throws InvalidArgumentError naming anything else. */
export function keepRule(value: string | undefined): KeepRule {
  if (value === undefined || value === "first") return { kind: "first" };
  if (value === "longest") return { kind: "longest" };
  const match = /^(max|min):(.+)$/s.exec(value);
  if (match === null)
    throw new InvalidArgumentError(
      "--keep",
      value,
      "first, longest, max:FIELD or min:FIELD (FIELD a JSON member holding a number, e.g. max:quality)",
    );
  return { kind: match[1] as "max" | "min", field: match[2] };
}

/**
 * The order of a rule as a comparison of records a and b (negative: a comes first). `values` are
 * the records' text lengths (longest) or their FIELD numbers (max, min), NaN for a record whose
 * FIELD is missing or not a number: such records come after every numbered one, in input order.
 */
export function keepOrder(rule: KeepRule, values: Float64Array): (a: number, b: number) => number {
  if (rule.kind === "first") return (a, b) => a - b;
  const larger = rule.kind !== "min";
  return (a, b) => {
    const x = values[a];
    const y = values[b];
    // Compared, not subtracted: Infinity - Infinity is NaN, and 1e400 parses as Infinity.
    if (x !== y) {
      if (Number.isNaN(x)) return Number.isNaN(y) ? a - b : 1;
      if (Number.isNaN(y)) return -1;
      return (larger ? x > y : x < y) ? -1 : 1;
    }
    return a - b;
  };
}
