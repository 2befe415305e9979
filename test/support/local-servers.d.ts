// Types of local-servers.js.
import type { ChildProcess } from "node:child_process";

/** `count` distinct ports free on 127.0.0.1 right now. */
export function freePorts(count: number): Promise<number[]>;

/** Resolves with `child` once it logs "Ready to accept connections"; rejects with its log if it exits or takes over 10 s. */
export function untilReady(child: ChildProcess, name: string): Promise<ChildProcess>;
