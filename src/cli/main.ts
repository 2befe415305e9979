#!/usr/bin/env node
// The crawlsieve command line: dispatches to one command, turns typed errors into a one-line
// message and exit code 2, and treats a closed stdout (`| head`) as a normal end.
import { initSync } from "../index.node.js";
import { CrawlsieveError } from "../errors.js";
import { canonicalizeCommand, canonicalizeUsage } from "./commands/canonicalize.js";
import { dedup, dedupUsage } from "./commands/dedup.js";
import { md5Command, md5Usage } from "./commands/md5.js";
import { nearDups, nearDupsUsage } from "./commands/near-dups.js";
import { size, sizeUsage } from "./commands/size.js";

const commands: Record<string, { run: (argv: string[]) => number | Promise<number>; usage: string }> = {
  dedup: { run: dedup, usage: dedupUsage },
  canonicalize: { run: canonicalizeCommand, usage: canonicalizeUsage },
  "near-dups": { run: nearDups, usage: nearDupsUsage },
  md5: { run: md5Command, usage: md5Usage },
  size: { run: size, usage: sizeUsage },
};

const usage = `usage: crawlsieve <command> [options]

${Object.values(commands)
  .map((command) => command.usage)
  .join("\n\n")}
`;

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    process.stdout.write(usage);
    return name === undefined ? 2 : 0;
  }
  const command = commands[name];
  if (command === undefined) {
    process.stderr.write(`crawlsieve: unknown command ${JSON.stringify(name)}\n\n${usage}`);
    return 2;
  }
  if (rest.includes("--help") || rest.includes("-h")) {
    process.stdout.write(command.usage + "\n");
    return 0;
  }
  initSync();
  return command.run(rest);
}

process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(0);
  throw error;
});

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    const parseError = error instanceof TypeError && String((error as NodeJS.ErrnoException).code ?? "").startsWith("ERR_PARSE_ARGS");
    if (error instanceof CrawlsieveError || parseError) {
      process.stderr.write(`crawlsieve: ${(error as Error).message}\n`);
    } else if ((error as NodeJS.ErrnoException)?.code === "ENOENT" || (error as NodeJS.ErrnoException)?.code === "EISDIR") {
      process.stderr.write(`crawlsieve: ${(error as Error).message}\n`);
    } else {
      process.stderr.write(`crawlsieve: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    }
    process.exitCode = 2;
  },
);
