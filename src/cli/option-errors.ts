// Node's parseArgs reports a typo as "Unknown option '--apporx'. To specify a positional argument
// starting with a '-', place it at the end of the command after '--', as in '-- "--apporx"': a
// user wants the command named, the nearest real option offered, and nothing else. The options a
// command has are read from its usage text, so the suggestion cannot drift from the help.
import { CrawlsieveError } from "../errors.js";

/** Turns a parseArgs error into a one-line CrawlsieveError for `command` (argv: its arguments), or returns undefined for any other error. */
export function explainOptionError(
  command: string,
  usage: string,
  error: unknown,
  argv: readonly string[] = [],
): CrawlsieveError | undefined {
  const code = String((error as NodeJS.ErrnoException)?.code ?? "");
  if (!(error instanceof TypeError) || !code.startsWith("ERR_PARSE_ARGS")) return undefined;
  const message = error.message;
  const help = `see crawlsieve ${command} --help`;
  const unknown = /^Unknown option '([^']+)'/.exec(message);
  if (unknown !== null) {
    const near = nearest(unknown[1], optionsIn(usage));
    return new CrawlsieveError(
      "ERR_UNKNOWN_OPTION",
      `${command}: unknown option ${unknown[1]}${near === undefined ? "" : ` (did you mean ${near}?)`}; ${help}`,
    );
  }
  const missing = /^Option '(-[^ ']+)[^']*' argument missing/.exec(message);
  if (missing !== null)
    return new CrawlsieveError("ERR_MISSING_VALUE", `${command}: ${missing[1]} needs a value; ${help}`);
  // "--items -5": parseArgs will not take a value that looks like an option, and says so in three lines.
  const ambiguous = /^Option '(-[^ ']+)[^']*' argument is ambiguous/.exec(message);
  if (ambiguous !== null) {
    const flag = ambiguous[1].replace(/^.*(--[^ ,]+)$/, "$1");
    const at = argv.indexOf(flag);
    const value = at === -1 ? undefined : argv[at + 1];
    const shown = value === undefined ? "a value" : JSON.stringify(value);
    return new CrawlsieveError(
      "ERR_AMBIGUOUS_VALUE",
      `${command}: ${flag} was given ${shown}, which starts with "-" and reads as an option; write ${flag}=${value ?? "VALUE"} to give it as the value; ${help}`,
    );
  }
  const positional = /^Unexpected argument '([^']*)'/.exec(message);
  if (positional !== null)
    return new CrawlsieveError(
      "ERR_UNEXPECTED_ARGUMENT",
      `${command} takes no file or other argument, got ${JSON.stringify(positional[1])}; ${help}`,
    );
  return new CrawlsieveError("ERR_BAD_OPTION", `${command}: ${message.split("\n")[0].split(". ")[0]}; ${help}`);
}

/** Every "--name" the usage text mentions. */
function optionsIn(usage: string): string[] {
  return [...new Set(usage.match(/--[a-z][a-z0-9-]*/g) ?? [])];
}

/** The candidate within edit distance 2 (or a third of the name) of `name`, if one is nearest. */
export function nearest(name: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(name.length / 3)) + 1;
  for (const candidate of candidates) {
    const d = distance(name.replace(/^-+/, "--"), candidate);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

/** Optimal string alignment distance (Levenshtein with adjacent transpositions). */
function distance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      rows[i][j] = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        rows[i][j] = Math.min(rows[i][j], rows[i - 2][j - 2] + 1);
    }
  }
  return rows[a.length][b.length];
}
