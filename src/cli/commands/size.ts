// `crawlsieve size`: what a filter for a planned load costs.
import { parseArgs } from "node:util";
import { FilterTooLargeError, InvalidArgumentError } from "../../errors.js";
import { counterOverflowBound, optimalBloom, optimalBlockedBloom } from "../../sizing/bloom.js";
import { optimalNearDupFilter } from "../../sizing/near-dup.js";
import { integerOption, probabilityOption, thresholdOption } from "../parse.js";
import { stdout } from "../stdout.js";

/** Usage of `size`. */
export const sizeUsage = `crawlsieve size --items N --fp-rate P [--counter-bits B] [--json]
  Bits (m), hashes (k) and bytes of a Bloom filter for N items at false-positive rate P, the
  cache-line-blocked variant, and a counting filter with B-bit counters (2, 4 or 8; default 4)
  with its counter-overflow bound P(max c >= 2^B) <= m (e ln2 / 2^B)^(2^B).
crawlsieve size --near-dup --items N --fp-rate P [--threshold J] [--json]
  The near-duplicate filter (NearDupFilter, near-dups --filter) for N texts: LSH bands and rows
  for Jaccard threshold J (default 0.8), one blocked Bloom filter a band at the rate that keeps
  the whole test at P, and the bytes a text (with --json: bytesPerItem, bands, rows, bandFilters).`;

/** Runs `size`; returns the exit code. */
export function size(argv: string[]): number {
  const { values } = parseArgs({
    args: argv,
    options: {
      items: { type: "string" },
      "fp-rate": { type: "string" },
      "counter-bits": { type: "string" },
      json: { type: "boolean" },
      "near-dup": { type: "boolean" },
      threshold: { type: "string" },
    },
    strict: true,
  });
  const items = integerOption("items", values.items);
  const fpRate = probabilityOption("fp-rate", values["fp-rate"]);
  if (values["near-dup"]) return nearDupSize(items, fpRate, thresholdOption(values.threshold), values.json === true);
  if (values.threshold !== undefined)
    throw new InvalidArgumentError(
      "--threshold",
      values.threshold,
      "given with --near-dup (a Bloom filter has no threshold)",
    );
  const counterBits =
    values["counter-bits"] === undefined ? 4 : integerOption("counter-bits", values["counter-bits"], 2, 8);
  if (![2, 4, 8].includes(counterBits))
    throw new InvalidArgumentError("--counter-bits", values["counter-bits"], "2, 4 or 8");
  const standard = optimalBloom({ items, fpRate });
  // A blocked filter cannot reach every rate a standard one can: then its row says why.
  let blocked: ReturnType<typeof optimalBlockedBloom> | { error: string };
  try {
    blocked = optimalBlockedBloom({ items, fpRate });
  } catch (error) {
    if (!(error instanceof FilterTooLargeError)) throw error;
    blocked = { error: error.message };
  }
  // Nor can a counting filter have more than 2^53 - 1 counters (one per bit of the standard filter).
  const counting:
    | { counterBits: number; bytes: number; overflowBound: number }
    | { counterBits: number; error: string } = Number.isSafeInteger(standard.bits)
    ? {
        counterBits,
        bytes: Math.ceil((standard.bits * counterBits) / 8),
        overflowBound: counterOverflowBound({ counters: standard.bits, counterBits }),
      }
    : { counterBits, error: `${standard.bits} counters exceed 2^53 - 1` };
  const report = { items, fpRate, standard, blocked, counting };
  if (values.json) {
    stdout().write(JSON.stringify(report) + "\n");
    return 0;
  }
  const rows: [string, string][] = [
    ["items (n)", String(items)],
    ["target fp rate (p)", String(fpRate)],
    ["bits (m)", String(standard.bits)],
    ["hashes (k)", String(standard.hashes)],
    ["bytes", `${standard.bytes} (${human(standard.bytes)})`],
    ["bits per item", standard.bitsPerItem.toFixed(3)],
    ["fp rate at n", standard.fpRate.toPrecision(4)],
    [
      "blocked: bits, k",
      "error" in blocked
        ? `not planned: ${blocked.error}`
        : `${blocked.bits}, ${blocked.hashes} (${human(blocked.bytes)}, ${blocked.bitsPerItem.toFixed(3)} bits/item, fp ${blocked.fpRate.toPrecision(4)})`,
    ],
    [
      `counting (${counterBits}-bit)`,
      "error" in counting ? `not planned: ${counting.error}` : `${counting.bytes} bytes (${human(counting.bytes)})`,
    ],
    [
      "overflow bound",
      "error" in counting
        ? "not planned"
        : `P(max c >= ${2 ** counterBits}) <= ${counting.overflowBound.toPrecision(3)}`,
    ],
  ];
  for (const [label, value] of rows) stdout().write(`${label.padEnd(20)}${value}\n`);
  return 0;
}

/** `size --near-dup`: the plan of a near-duplicate filter. */
function nearDupSize(items: number, fpRate: number, threshold: number, json: boolean): number {
  const plan = optimalNearDupFilter({ items, fpRate, threshold });
  const { band } = plan;
  if (json) {
    const bandFilter = { bits: band.bits, hashes: band.hashes, bytes: band.bytes, fpRate: band.fpRate };
    const report = {
      bytesPerItem: plan.bytesPerItem,
      items,
      fpRate,
      threshold,
      bands: plan.bands,
      rows: plan.rows,
      bandFpRate: plan.bandFpRate,
      bandFilters: Array.from({ length: plan.bands }, () => bandFilter),
      bits: plan.bits,
      bytes: plan.bytes,
      designedFpRate: plan.designedFpRate,
      recallAtThreshold: plan.recallAtThreshold,
    };
    stdout().write(JSON.stringify(report) + "\n");
    return 0;
  }
  const rows: [string, string][] = [
    ["items (n)", String(items)],
    ["target fp rate (P)", String(fpRate)],
    ["threshold (J)", String(threshold)],
    ["bands x rows", `${plan.bands} x ${plan.rows}`],
    [
      "per band",
      `blocked filter of ${band.bits} bits, k = ${band.hashes}, fp ${plan.bandFpRate.toPrecision(4)} (1 - (1 - P)^(1/b))`,
    ],
    ["bytes", `${plan.bytes} (${human(plan.bytes)})`],
    ["bytes per item", plan.bytesPerItem.toFixed(3)],
    ["fp rate at n", plan.designedFpRate.toPrecision(4)],
    ["recall at J", `${plan.recallAtThreshold.toPrecision(6)} (a pair at J shares a band: 1 - (1 - J^r)^b)`],
  ];
  for (const [label, value] of rows) stdout().write(`${label.padEnd(20)}${value}\n`);
  return 0;
}

function human(bytes: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(unit === 0 ? 0 : 2)} ${units[unit]}`;
}
