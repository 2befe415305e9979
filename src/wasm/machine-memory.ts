// The physical memory of the machine, for bounds checked before a structure is made: a plan that
// cannot fit in it is refused at once instead of reserving memory for it. Only the Node entry knows
// it (os.totalmem(), set by init); elsewhere it is unknown and only a design's own bounds apply.

let known: number | undefined;

/** Sets the machine's physical memory in bytes (undefined: unknown); the Node entry's init calls it. */
export function setMachineMemory(bytes: number | undefined): void {
  known = bytes;
}

/** The machine's physical memory in bytes, or Infinity where unknown (tests set less: CRAWLSIEVE_TEST_MACHINE_MEMORY). */
export function machineMemory(): number {
  const forced = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env
    ?.CRAWLSIEVE_TEST_MACHINE_MEMORY;
  if (forced !== undefined) return Number(forced);
  return known ?? Infinity;
}
