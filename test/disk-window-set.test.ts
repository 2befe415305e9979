// The windowed store on disk (openDiskWindowSet) against the Map of times of window-model.ts:
// random batches, clock steps, forgets, removals and reopenings; two processes racing on the same
// keys (each key new for exactly one); kill -9 while writing (every acknowledged key stays seen);
// a torn tail cut off and told; the file rewritten at close with only the keys still held.
import { spawn } from "node:child_process";
import { appendFileSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { CrawlsieveError } from "../build/js/index.node.js";
import { openDiskWindowSet } from "../build/js/seen/disk/disk-window-set.js";
import { ready, rng } from "./helpers.js";
import { D, H, HOSTS, KEYS, Model, ttlVariant, useModelRules } from "./window-model.js";

beforeAll(ready);

const dir = () => mkdtempSync(join(tmpdir(), "cs-disk-window-"));
const MODULE = new URL("../build/js/seen/disk/disk-window-set.js", import.meta.url).pathname;

for (const semantics of ["first-seen", "refresh"] as const) {
  it(`answers as the model does across batches, forgets, removals and reopenings (${semantics})`, async () => {
    const random = rng(semantics === "refresh" ? 21 : 22);
    const { ttlMap, rules } = ttlVariant(false);
    useModelRules(rules);
    let now = Date.UTC(2026, 5, 1) / 1000;
    const where = dir();
    const options = { ttl: "1d", ttlMap: ttlMap as never, semantics, items: 64, now: () => now * 1000 } as const;
    let set = await openDiskWindowSet(where, options);
    const model = new Model(semantics === "refresh");
    const pick = () => KEYS[Math.floor(random() * KEYS.length)];
    for (let step = 0; step < 600; step++) {
      const r = random();
      const batch = Array.from({ length: 1 + Math.floor(random() * 30) }, pick);
      if (r < 0.4) expect([...(await set.addMany(batch))], `step ${step}`).toEqual(model.add(batch, now));
      else if (r < 0.5) expect([...(await set.hasMany(batch))]).toEqual(batch.map((k) => (model.held(k, now) ? 1 : 0)));
      else if (r < 0.55)
        expect([...(await set.seenAtMany(batch))]).toEqual(
          batch.map((k) => (model.held(k, now) ? model.times.get(k)! * 1000 : NaN)),
        );
      else if (r < 0.6) expect([...(await set.removeMany(batch))]).toEqual(model.remove(batch, now));
      else if (r < 0.63) {
        const host = HOSTS[Math.floor(random() * HOSTS.length)];
        await set.forgetHost(host);
        model.tombstones.push([host, now]);
      } else if (r < 0.65) {
        await set.forgetPrefix("https://archive.example/old/");
        model.tombstones.push(["https://archive.example/old/", now]);
      } else if (r < 0.7) {
        await set.close();
        set = await openDiskWindowSet(where, options);
      } else now += [0, 1, 90, 600, H, D, 2 * D][Math.floor(random() * 7)];
    }
    await set.close();
  });
}

describe("openDiskWindowSet", () => {
  it("two writers sharing the directory: each key new for exactly one of them, times shared", async () => {
    const where = dir();
    const now = 1_800_000_000;
    const a = await openDiskWindowSet(where, { ttl: "1h", now: () => now * 1000 });
    const b = await openDiskWindowSet(where, { ttl: "1h", now: () => now * 1000 });
    const keys = Array.from({ length: 3000 }, (_, i) => `https://example.com/${i % 1700}`);
    const fresh = new Map<string, number>();
    for (let at = 0; at < keys.length; at += 200) {
      const batch = keys.slice(at, at + 200);
      const flags = await (at % 400 === 0 ? a : b).addMany(batch);
      batch.forEach((k, i) => fresh.set(k, (fresh.get(k) ?? 0) + flags[i]));
    }
    expect(fresh.size).toBe(1700);
    expect([...fresh.values()].every((n) => n === 1)).toBe(true);
    expect([...(await a.seenAtMany(["https://example.com/5"]))]).toEqual([now * 1000]);
    await a.close();
    await b.close();
  });

  it("two processes racing on the same keys: each key reported new by exactly one", async () => {
    const where = dir();
    const script = `
      import { openDiskWindowSet } from ${JSON.stringify(MODULE)};
      const set = await openDiskWindowSet(process.argv[1], { ttl: "never", durable: false });
      const out = [];
      for (let round = 0; round < 20; round++) {
        const batch = Array.from({ length: 500 }, (_, i) => "k" + ((i * 7 + round * 131) % 4000));
        const flags = await set.addMany(batch);
        batch.forEach((k, i) => { if (flags[i]) out.push(k); });
      }
      await set.close();
      process.stdout.write(out.join("\\n"));
    `;
    const run = () =>
      new Promise<string[]>((resolve, reject) => {
        const child = spawn(process.execPath, ["--input-type=module", "-e", script, where]);
        let out = "";
        child.stdout.on("data", (d) => (out += d));
        child.on("error", reject);
        child.on("exit", (code) =>
          code === 0 ? resolve(out.split("\n").filter(Boolean)) : reject(new Error(`exit ${code}`)),
        );
      });
    const [one, two] = await Promise.all([run(), run()]);
    const all = [...one, ...two];
    expect(new Set(all).size).toBe(all.length);
    const reference = new Set<string>();
    for (let round = 0; round < 20; round++)
      for (let i = 0; i < 500; i++) reference.add(`k${(i * 7 + round * 131) % 4000}`);
    expect(new Set(all)).toEqual(reference);
  }, 60_000);

  it("kill -9 while writing: every key a batch acknowledged stays seen, the torn tail is cut and told", async () => {
    const where = dir();
    const script = `
      import { openDiskWindowSet } from ${JSON.stringify(MODULE)};
      const set = await openDiskWindowSet(process.argv[1], { ttl: "52w", durable: false });
      for (let round = 0; ; round++) {
        const batch = Array.from({ length: 1000 }, (_, i) => "https://site" + (i % 9) + ".example/" + round + "/" + i);
        await set.addMany(batch);
        process.stdout.write(round + "\\n");
      }
    `;
    const acknowledged = await new Promise<number>((resolve) => {
      const child = spawn(process.execPath, ["--input-type=module", "-e", script, where]);
      let out = "";
      child.stdout.on("data", (d) => {
        out += d;
        if (out.split("\n").length > 30) child.kill("SIGKILL");
      });
      child.on("exit", () => resolve(Math.max(...out.split("\n").filter(Boolean).map(Number))));
    });
    expect(acknowledged).toBeGreaterThan(20);
    // A write cut part way, as a kill during a write leaves it.
    appendFileSync(join(where, "window.log"), Buffer.from([0x43, 0x53, 0x46, 0x54, 9, 0, 0, 0, 1, 2, 3]));
    const told: string[] = [];
    const set = await openDiskWindowSet(where, { ttl: "52w", onRecover: (m) => told.push(m) });
    for (let round = 0; round <= acknowledged; round++) {
      const batch = Array.from({ length: 1000 }, (_, i) => `https://site${i % 9}.example/${round}/${i}`);
      expect(
        (await set.hasMany(batch)).every((f) => f === 1),
        `round ${round}`,
      ).toBe(true);
    }
    expect(told.join("\n")).toMatch(/partly written batch/);
    await set.close();
  }, 60_000);

  it("rewrites the file at close without the keys no TTL holds, and answers the same after", async () => {
    const where = dir();
    let now = 1_900_000_000;
    const options = { ttl: "1h", ttlMap: { "keep.example": "3h" }, now: () => now * 1000 } as const;
    const set = await openDiskWindowSet(where, options);
    for (let hour = 0; hour < 6; hour++) {
      await set.addMany(Array.from({ length: 20_000 }, (_, i) => `https://h${hour}.example/${i}`));
      await set.addMany([`https://keep.example/${hour}`]);
      now += H;
    }
    await set.forgetHost("h5.example");
    const probe = [0, 1, 2, 3, 4, 5].flatMap((h) => [`https://h${h}.example/7`, `https://keep.example/${h}`]);
    const answers = [...(await set.hasMany(probe))];
    const before = statSync(join(where, "window.log")).size;
    await set.close();
    const after = statSync(join(where, "window.log")).size;
    expect(before).toBeGreaterThan(6 * 20_000 * 20);
    // Kept: what the longest TTL (3 h) may still hold, the last two hours' keys; the rest is gone.
    expect(after).toBeLessThan(2 * 20_001 * 20 + 64 * 16 + 200); // a record a partition, the tombstone
    expect(after).toBeGreaterThan(2 * 20_000 * 20);
    const again = await openDiskWindowSet(where, options);
    expect([...(await again.hasMany(probe))]).toEqual(answers);
    // By the rules, 6 h in: keep.example holds 3 h (its keys of hours 4 and 5), the rest 1 h (none).
    expect(answers).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1]);
    await again.close();
  }, 60_000);

  it("refuses another store's directory and damaged records, naming them", async () => {
    const seen = dir();
    writeFileSync(join(seen, "fingerprints.log"), "");
    await expect(openDiskWindowSet(seen, { ttl: "1d" })).rejects.toThrow(/holds another store \(fingerprints\.log\)/);
    const where = dir();
    const set = await openDiskWindowSet(where, { ttl: "1d" });
    await set.addMany(["a", "b"]);
    await set.addMany(["c"]);
    await set.close();
    // A byte changed inside the first record, with a whole record after it: corruption, not a torn write.
    const file = join(where, "window.log");
    const bytes = readFileSync(file);
    bytes[16 + 10] ^= 0xff;
    writeFileSync(file, bytes);
    await expect(openDiskWindowSet(where, { ttl: "1d" })).rejects.toThrow(CrawlsieveError);
  });
});
