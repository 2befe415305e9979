// The command-line flags that choose URL canonicalization options, shared by commands.
import type { CanonicalizeOptions } from "../url/canonicalize.js";

/** parseArgs option specs of the canonicalization flags. */
export const urlFlags = {
  "keep-fragments": { type: "boolean" },
  "drop-blank-values": { type: "boolean" },
  encoding: { type: "string" },
  "query-separator": { type: "string" },
  w3lib: { type: "string" },
  "remove-default-port": { type: "boolean" },
  "remove-dot-segments": { type: "boolean" },
  "remove-tracking": { type: "boolean" },
  "fold-www": { type: "boolean" },
} as const;

/** Usage lines of the canonicalization flags. */
export const urlFlagsUsage = `  --keep-fragments       keep "#fragment"            --drop-blank-values   drop "a=" arguments
  --encoding E           page encoding of queries (default utf8; latin1, cp1251, ...)
  --query-separator S    the only argument separator (default: & and ;, as every w3lib release)
  --w3lib 2.4.1|head     whose rules: the release Scrapy installs (default) or w3lib's main branch
  opt-in, beyond Scrapy's rules: --remove-default-port --remove-dot-segments
  --remove-tracking (utm_*, fbclid, gclid, ...) --fold-www`;

/** Canonicalization options from parsed flag values. */
export function urlOptions(values: Record<string, string | boolean | undefined>): CanonicalizeOptions {
  return {
    keepFragments: values["keep-fragments"] === true,
    keepBlankValues: values["drop-blank-values"] !== true,
    encoding: values.encoding as string | undefined,
    querySeparator: values["query-separator"] as string | undefined,
    w3lib: values.w3lib as CanonicalizeOptions["w3lib"],
    removeDefaultPort: values["remove-default-port"] === true,
    removeDotSegments: values["remove-dot-segments"] === true,
    removeTrackingParams: values["remove-tracking"] === true,
    foldWww: values["fold-www"] === true,
  };
}
