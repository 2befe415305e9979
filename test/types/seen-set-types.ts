// Compiled by `npm run typecheck` (strict), never run: what the types promise for each backend.
// Each @ts-expect-error fails the typecheck if the line it guards starts to compile.
import { openSeenSet, type SeenSet } from "../../src/index.node.js";

/** An exact memory set has serialize and removeMany in its type; the README's example compiles as written. */
export async function memoryBackend(): Promise<void> {
  const seen = await openSeenSet({ backend: "memory" });
  const bytes: Uint8Array = seen.serialize();
  const removed: Uint8Array = await seen.removeMany(["https://example.com/a"]);
  const again = await openSeenSet({ backend: "memory", bytes });
  again.serialize();
  void removed;
}

/** An approximate memory set and a window can be saved but cannot forget; lmdb can forget, not be saved. */
export async function otherBackends(ready: SeenSet): Promise<void> {
  const approx = await openSeenSet({ backend: "memory", exact: false });
  approx.serialize();
  // @ts-expect-error a Bloom backend cannot forget one key
  await approx.removeMany(["a"]);
  const window = await openSeenSet({ backend: "window", window: "7d" });
  window.serialize();
  const disk = await openSeenSet({ backend: "lmdb", path: "/tmp/seen" });
  await disk.removeMany(["a"]);
  // @ts-expect-error an on-disk set persists itself and has no serialize
  disk.serialize();
  const same: SeenSet = await openSeenSet(ready);
  void same;
}
