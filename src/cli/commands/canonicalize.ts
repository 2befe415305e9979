// `crawlsieve canonicalize`: the canonical form of every input line, one per line.
import { parseArgs } from "node:util";
import { canonicalizeUrl } from "../../url/canonicalize.js";
import { readInputs } from "../lines.js";
import { limitedLineBatches, MAX_LINE_BYTES } from "../line-limit.js";
import { Output } from "../output.js";
import { urlFlags, urlFlagsUsage, urlOptions } from "../url-options.js";

/** Usage of `canonicalize`. */
export const canonicalizeUsage = `crawlsieve canonicalize [FILE...] [--keep-fragments] [--drop-blank-values] [--encoding E] [--query-separator S] [--w3lib 2.4.1|head] [extras]
  Prints the canonical form of every input URL (Scrapy's canonicalize_url rules), one per line.
  A line longer than ${MAX_LINE_BYTES >> 20} MiB stops the command with an error naming its file and line.
${urlFlagsUsage}`;

/** Runs `canonicalize`; returns the exit code. */
export async function canonicalizeCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, options: urlFlags, allowPositionals: true, strict: true });
  const options = urlOptions(values);
  canonicalizeUrl("http://check.options/", options);
  const out = new Output();
  const encoder = new TextEncoder();
  let input = 0;
  for await (const source of readInputs(positionals)) {
    const file = positionals.length === 0 || positionals[input] === "-" ? "stdin" : positionals[input];
    input++;
    for await (const batch of limitedLineBatches(source, file, "a line read whole by canonicalize")) {
      let text = "";
      for (let i = 0; i < batch.count; i++)
        text += canonicalizeUrl(batch.data.subarray(batch.spans[2 * i], batch.spans[2 * i + 1]), options) + "\n";
      out.push(encoder.encode(text));
      if (out.full) await out.flush();
    }
  }
  await out.end();
  return 0;
}
