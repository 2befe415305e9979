#!/usr/bin/env node
// The crawlsieve command line: dispatches to one command, turns typed errors into a one-line
// message and exit code 2, and treats a closed stdout (`| head`) as a normal end.
import { createRequire } from "node:module";
import { initSync } from "../wasm/node.js";
import { askForHugePages } from "../wasm/huge-pages.js";
import { CrawlsieveError, OutputError } from "../errors.js";
import { explainOptionError, nearest } from "./option-errors.js";
import { handleStdoutErrors, stdout } from "./stdout.js";

interface Command {
  run(argv: string[]): number | Promise<number>;
  readonly usage: string;
}

// Each command's module is loaded when it runs: start-up is a large share of a short run, and
// `dedup` of a file should not first load what `near-dups` needs.
const commands: Record<string, () => Promise<Command>> = {
  dedup: () => import("./commands/dedup.js").then((m) => ({ run: m.dedup, usage: m.dedupUsage })),
  canonicalize: () =>
    import("./commands/canonicalize.js").then((m) => ({ run: m.canonicalizeCommand, usage: m.canonicalizeUsage })),
  "near-dups": () => import("./commands/near-dups.js").then((m) => ({ run: m.nearDups, usage: m.nearDupsUsage })),
  md5: () => import("./commands/md5.js").then((m) => ({ run: m.md5Command, usage: m.md5Usage })),
  size: () => import("./commands/size.js").then((m) => ({ run: m.size, usage: m.sizeUsage })),
  forget: () => import("./commands/forget.js").then((m) => ({ run: m.forgetCommand, usage: m.forgetUsage })),
};

/** The whole usage text (every command's module is loaded for it). */
async function usage(): Promise<string> {
  const all = await Promise.all(Object.values(commands).map((load) => load()));
  return `usage: crawlsieve <command> [options]     (crawlsieve --version prints the version)

${all.map((command) => command.usage).join("\n\n")}
`;
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === "--version" || name === "-V" || name === "version") {
    stdout().write(`crawlsieve ${version()}\n`);
    return 0;
  }
  if (name === undefined) {
    // A usage error: a few lines on stderr, not the whole reference on stdout.
    process.stderr.write(
      `usage: crawlsieve <command> [options]; commands: ${Object.keys(commands).join(", ")}\nsee crawlsieve help <command>, or crawlsieve --help for all of them\n`,
    );
    return 2;
  }
  if (name === "help" && rest.length > 0 && Object.hasOwn(commands, rest[0])) {
    stdout().write((await commands[rest[0]]()).usage + "\n");
    return 0;
  }
  if (name === "--help" || name === "-h" || (name === "help" && rest.length === 0)) {
    stdout().write(await usage());
    return 0;
  }
  const load = name === "help" ? undefined : Object.hasOwn(commands, name) ? commands[name] : undefined;
  if (load === undefined) {
    // One line: the whole usage would bury the answer to a typo ("help TYPO" names the typo).
    const asked = name === "help" ? rest[0] : name;
    const near = nearest(asked, Object.keys(commands));
    process.stderr.write(
      `crawlsieve: unknown command ${JSON.stringify(asked)}${near === undefined ? "" : ` (did you mean ${near}?)`}; commands: ${Object.keys(commands).join(", ")}; see crawlsieve --help\n`,
    );
    return 2;
  }
  const command = await load();
  if (rest.includes("--help") || rest.includes("-h")) {
    stdout().write(command.usage + "\n");
    return 0;
  }
  initSync();
  askForHugePages();
  try {
    return await command.run(rest);
  } catch (error) {
    throw explainOptionError(name, command.usage, error, rest) ?? error;
  }
}

/** The package's version, from the package.json this file was installed with. */
function version(): string {
  return String(createRequire(import.meta.url)("../../../package.json").version);
}

// A reader that went away (`| head`) ends the run quietly; any other failed write (a full disk,
// /dev/full) ends it with one line and exit 2, whichever of this event and the command's own
// awaited write reports it first.
let reported = false;
function fail(message: string): void {
  if (!reported) process.stderr.write(`crawlsieve: ${message}\n`);
  reported = true;
  process.exitCode = 2;
}
handleStdoutErrors((error) => {
  if (error.code === "EPIPE") process.exit(0);
  fail(new OutputError(error).message);
  process.exit(2);
});

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    const code = (error as NodeJS.ErrnoException)?.code;
    if (error instanceof OutputError && (error.cause as NodeJS.ErrnoException)?.code === "EPIPE") {
      process.exitCode = 0;
      return;
    }
    if (error instanceof CrawlsieveError) {
      fail(error.message);
      return;
    } else if (code === "ENOENT" || code === "EISDIR" || code === "EACCES" || code === "ENOTDIR") {
      // Node names the path in some of these and not in others (a directory read as a file).
      const path = (error as NodeJS.ErrnoException).path;
      const message = (error as Error).message;
      process.stderr.write(
        `crawlsieve: ${path !== undefined && !message.includes(path) ? `${path}: ` : ""}${message}\n`,
      );
    } else {
      process.stderr.write(
        `crawlsieve: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
    }
    process.exitCode = 2;
  },
);
