#!/usr/bin/env node
// The crawlsieve command line: dispatches to one command, turns typed errors into a one-line
// message and exit code 2, and treats a closed stdout (`| head`) as a normal end.
import { createRequire } from "node:module";
import { initSync } from "../wasm/node.js";
import { CrawlsieveError } from "../errors.js";
import { explainOptionError } from "./option-errors.js";
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

const usage = `usage: crawlsieve <command> [options]     (crawlsieve --version prints the version)

${Object.values(commands)
  .map((command) => command.usage)
  .join("\n\n")}
`;

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === "--version" || name === "-V" || name === "version") {
    process.stdout.write(`crawlsieve ${version()}\n`);
    return 0;
  }
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
  try {
    return await command.run(rest);
  } catch (error) {
    throw explainOptionError(name, command.usage, error) ?? error;
  }
}

/** The package's version, from the package.json this file was installed with. */
function version(): string {
  return String(createRequire(import.meta.url)("../../../package.json").version);
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
    const code = (error as NodeJS.ErrnoException)?.code;
    if (error instanceof CrawlsieveError) {
      process.stderr.write(`crawlsieve: ${error.message}\n`);
    } else if (code === "ENOENT" || code === "EISDIR" || code === "EACCES" || code === "ENOTDIR") {
      // Node names the path in some of these and not in others (a directory read as a file).
      const path = (error as NodeJS.ErrnoException).path;
      const message = (error as Error).message;
      process.stderr.write(`crawlsieve: ${path !== undefined && !message.includes(path) ? `${path}: ` : ""}${message}\n`);
    } else {
      process.stderr.write(`crawlsieve: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    }
    process.exitCode = 2;
  },
);
