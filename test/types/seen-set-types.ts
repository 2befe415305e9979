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

/** The browser entry's window is a WindowedSeenSet (forgets hosts, tells times); its plain set has no window methods. */
export async function browserBackends(): Promise<void> {
  const { openSeenSet: openInBrowser } = await import("../../src/index.browser.js");
  const windowed = await openInBrowser({ backend: "browser", name: "w", window: "7d", ttlMap: { "a.example": "1h" } });
  await windowed.forgetHost("a.example", Date.now());
  const times: Float64Array = await windowed.seenAtMany(["a"]);
  const storage: "opfs" | "indexeddb" = windowed.storage;
  const plain = await openInBrowser({ backend: "browser", name: "p" });
  // @ts-expect-error a plain browser set has no window
  await plain.forgetHost("a.example");
  void times;
  void storage;
}

/** durableWindowSet is a WindowedSeenSet whose calls may name their time. */
export async function durableWindow(
  namespace: import("../../src/durable-object/index.js").DurableObjectNamespaceLike,
): Promise<void> {
  const { durableWindowSet } = await import("../../src/durable-object/index.js");
  const seen = durableWindowSet(namespace, { name: "w", shards: 4, ttl: "30d", now: Date.now });
  const flags: Uint8Array = await seen.addMany(["a"], Date.now());
  await seen.forgetPrefix("https://a.example/news/");
  // @ts-expect-error a window needs its ttl
  durableWindowSet(namespace, { name: "w" });
  void flags;
}
