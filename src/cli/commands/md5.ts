// `crawlsieve md5`: one hex MD5 digest per input line (the line's bytes without "\n" or "\r\n").
import { parseArgs } from "node:util";
import { Md5, md5Spans, toHex } from "../../hash/md5.js";
import { lineBatches, readInputs } from "../lines.js";
import { Output } from "../output.js";
import { LONG_LINE_BYTES } from "../../lines/long-line-store.js";

/** Usage of `md5`. */
export const md5Usage = `crawlsieve md5 [FILE...]
  Prints the MD5 of every input line (stdin when no FILE), one lowercase hex digest per line.
  A line's bytes exclude its "\\n" (and a "\\r" before it); bytes are hashed as they are.`;

/** Runs `md5`; returns the exit code. */
export async function md5Command(argv: string[]): Promise<number> {
  const { positionals } = parseArgs({ args: argv, options: {}, allowPositionals: true, strict: true });
  const out = new Output();
  // A line past 16 MiB is hashed as it streams by, so memory stays bounded whatever its length.
  let hasher = new Md5();
  const long = { threshold: LONG_LINE_BYTES, feed: (bytes: Uint8Array) => void hasher.update(bytes) };
  for await (const source of readInputs(positionals)) {
    for await (const batch of lineBatches(source, long)) {
      if (batch.long) {
        out.push(Buffer.from(toHex(hasher.digest()) + "\n", "latin1"));
        hasher = new Md5();
        continue;
      }
      const digests = md5Spans(batch.data, batch.spans);
      let text = "";
      for (let i = 0; i < batch.count; i++) text += toHex(digests.subarray(16 * i, 16 * i + 16)) + "\n";
      out.push(Buffer.from(text, "latin1"));
      if (out.full) await out.flush();
    }
  }
  await out.end();
  return 0;
}
