// ExactWindowSet against a model written here from the rules alone: a Map of key -> time, TTLs
// matched with the WHATWG URL parser, tombstones as a list. Random batches, clock steps, forgets,
// removals and reopenings (serialize / deserialize); a small table so growth and sweeps happen.
import { beforeAll, describe, expect, it } from "vitest";
import { FormatError, InvalidArgumentError } from "../build/js/index.node.js";
import { ExactWindowSet } from "../build/js/window/exact-window-set.js";
import { parseTtlMap, PrefixRules } from "../build/js/window/ttl-rules.js";
import { ready, rng } from "./helpers.js";
import { D, H, HOSTS, KEYS, Model, ttlVariant, useModelRules } from "./window-model.js";

beforeAll(ready);

for (const [semantics, never] of [
  ["first-seen", true],
  ["refresh", true],
  ["first-seen", false],
  ["refresh", false],
] as const) {
  describe(`ExactWindowSet (${semantics}, ${never ? "a never rule" : "every TTL finite"}) against a Map of times`, () => {
    it("answers every batch, clock step, forget, removal and reopening as the model does", () => {
      const random = rng((semantics === "refresh" ? 7 : 3) + (never ? 0 : 10));
      const { ttlMap, rules } = ttlVariant(never);
      useModelRules(rules);
      let now = Date.UTC(2026, 0, 1) / 1000;
      const clock = () => now * 1000 + 999; // ms inside the second: the set takes whole seconds
      const options = { ttl: "1d", ttlMap: ttlMap as never, semantics, items: 16, now: clock } as const;
      let set = new ExactWindowSet(options);
      const model = new Model(semantics === "refresh");
      // Known keys, and one in four never seen before: the table keeps growing (and sweeping).
      let fresh = 0;
      const pick = () =>
        random() < 0.25 ? `https://fresh${fresh++ % 5}.example/${fresh}` : KEYS[Math.floor(random() * KEYS.length)];
      for (let step = 0; step < 3000; step++) {
        const r = random();
        const batch = Array.from({ length: 1 + Math.floor(random() * 40) }, pick);
        if (r < 0.35) {
          expect([...set.addMany(batch)], `add at step ${step}`).toEqual(model.add(batch, now));
        } else if (r < 0.45) {
          expect([...set.hasMany(batch)]).toEqual(batch.map((k) => (model.held(k, now) ? 1 : 0)));
          const later = now + Math.floor(random() * 3 * D);
          expect([...set.dueMany(batch, later * 1000)]).toEqual(batch.map((k) => (model.held(k, later) ? 0 : 1)));
        } else if (r < 0.5) {
          expect([...set.seenAtMany(batch)]).toEqual(
            batch.map((k) => (model.held(k, now) ? model.times.get(k)! * 1000 : NaN)),
          );
        } else if (r < 0.55) {
          expect([...set.removeMany(batch)]).toEqual(model.remove(batch, now));
        } else if (r < 0.58) {
          const host = HOSTS[Math.floor(random() * HOSTS.length)];
          set.forgetHost(host);
          model.tombstones.push([host, now]);
        } else if (r < 0.6) {
          const prefix = random() < 0.5 ? "https://archive.example/old/" : "http://news.example/live/";
          set.forgetPrefix(prefix);
          model.tombstones.push([prefix, now]);
        } else if (r < 0.63) {
          const bytes = set.serialize();
          set.dispose();
          set = ExactWindowSet.deserialize(bytes, options);
        } else {
          // Steps of 0 s, 1 s, minutes, hours and days: the boundaries of every TTL get crossed.
          const steps = [0, 1, 59, 89, 90, 600, H, 2 * H, D, 2 * D, 9 * D];
          now += steps[Math.floor(random() * steps.length)];
        }
      }
      // The model kept every key; with every TTL finite the set dropped expired ones as it grew.
      if (never) expect(set.size).toBeLessThanOrEqual(model.times.size);
      else expect(set.size).toBeLessThan(model.times.size / 2);
      set.dispose();
    });
  });
}

describe("ExactWindowSet", () => {
  it("makes a key new exactly a TTL after the sighting reported new (first-seen), or after the last (refresh)", () => {
    let now = 1_000_000;
    const first = new ExactWindowSet({ ttl: "10s", now: () => now * 1000 });
    const refresh = new ExactWindowSet({ ttl: "10s", semantics: "refresh", now: () => now * 1000 });
    const seen: [number, number, number][] = [];
    for (const step of [0, 5, 4, 1, 9, 10, 1]) {
      now += step;
      seen.push([now, first.addMany(["k"])[0], refresh.addMany(["k"])[0]]);
    }
    expect(seen).toEqual([
      [1_000_000, 1, 1],
      [1_000_005, 0, 0],
      [1_000_009, 0, 0],
      [1_000_010, 1, 0], // first-seen: 10 s after 1_000_000; refresh: the last sighting was at 1_000_009
      [1_000_019, 0, 0], // refresh: 9 s after 1_000_010
      [1_000_029, 1, 1], // first-seen: 19 s after 1_000_010; refresh: 10 s after 1_000_019
      [1_000_030, 0, 0],
    ]);
  });

  it("forgets a host in the second it is asked, keys recorded after it in that second stay seen", () => {
    const now = 2_000_000;
    const set = new ExactWindowSet({ ttl: "never", now: () => now * 1000 });
    set.addMany(["https://a.example/1", "https://x.a.example/2", "https://b.example/3"]);
    set.forgetHost("a.example");
    expect([...set.hasMany(["https://a.example/1", "https://x.a.example/2", "https://b.example/3"])]).toEqual([
      0, 0, 1,
    ]);
    expect([...set.addMany(["https://a.example/1"])]).toEqual([1]);
    expect([...set.addMany(["https://a.example/1"])]).toEqual([0]);
    expect(set.seenAtMany(["https://a.example/1"])[0]).toBe((now + 1) * 1000);
  });

  it("drops expired keys as it grows, so memory follows the keys within their windows", () => {
    let now = 3_000_000;
    const set = new ExactWindowSet({ ttl: "1h", items: 1000, now: () => now * 1000 });
    const start = set.byteLength;
    for (let hour = 0; hour < 48; hour++) {
      set.addMany(Array.from({ length: 5000 }, (_, i) => `https://h${hour}.example/${i}`));
      now += H;
    }
    // 48 hours of 5,000 new keys each, a window of one hour: never more than two hours' keys held.
    expect(set.size).toBeLessThanOrEqual(10_000);
    expect(set.byteLength).toBeLessThan(start + 64 * 2 ** 20);
    const bytesPerKey = (set.byteLength - start) / set.size;
    expect(bytesPerKey).toBeLessThan(40);
  });

  it("keeps its keys, times and tombstones through serialize, and refuses damaged bytes", () => {
    const now = 4_000_000;
    const set = new ExactWindowSet({ ttl: "1d", now: () => now * 1000 });
    set.addMany(["https://a.example/1", "https://b.example/2", "k"]);
    set.forgetHost("b.example");
    const bytes = set.serialize();
    const back = ExactWindowSet.deserialize(bytes, { ttl: "1d", now: () => now * 1000 });
    expect([...back.hasMany(["https://a.example/1", "https://b.example/2", "k", "z"])]).toEqual([1, 0, 1, 0]);
    expect([...back.seenAtMany(["k"])]).toEqual([now * 1000]);
    const damaged = bytes.slice();
    damaged[30] ^= 1;
    expect(() => ExactWindowSet.deserialize(damaged, { ttl: "1d" })).toThrow(FormatError);
    expect(() => ExactWindowSet.deserialize(bytes.subarray(0, bytes.length - 9), { ttl: "1d" })).toThrow(FormatError);
  });

  it("refuses bad options and times, naming the value", () => {
    expect(() => new ExactWindowSet({ ttl: "1.5s" })).toThrow(/ttl must be a whole number of seconds/);
    expect(() => new ExactWindowSet({ ttl: "x" as never })).toThrow(InvalidArgumentError);
    expect(() => new ExactWindowSet({ ttl: "1d", ttlMap: { "not a host!": "1d" } })).toThrow(/not a host!/);
    expect(() => new ExactWindowSet({ ttl: "1d", semantics: "sliding" as never })).toThrow(/sliding/);
    const set = new ExactWindowSet({ ttl: "1d" });
    expect(() => set.addMany(["k"], -5)).toThrow(/at must be a time/);
    expect(() => set.forgetHost("https://a.example/")).toThrow(/host must be/);
    expect(() => set.forgetPrefix("a.example")).toThrow(/prefix must be/);
  });
});

describe("TTL rules", () => {
  it("match hosts with their subdomains, URL prefixes first and longest, and nothing else", () => {
    const rules = new PrefixRules<string>([
      ["example.com", "host"],
      ["a.example.com", "sub"],
      ["https://example.com/news/", "news"],
      ["https://example.com/news/live/", "live"],
    ]);
    expect(rules.longest("https://example.com/")).toBe("host");
    expect(rules.longest("https://WWW.Example.COM:8080/x")).toBe("host");
    expect(rules.longest("https://a.example.com/news/")).toBe("sub");
    expect(rules.longest("https://example.com/news/live/1")).toBe("live");
    expect(rules.longest("HTTPS://EXAMPLE.COM/news/1")).toBe("news");
    expect(rules.longest("http://example.com/news/1")).toBe("host");
    expect(rules.longest("https://notexample.com/")).toBeUndefined();
    expect(rules.longest("https://user@example.com/")).toBe("host");
    expect(rules.longest("example.com/news")).toBeUndefined();
  });

  it("read a TTL map file and name the file and line of a bad rule", () => {
    const text = "# TTLs\nnews.example 1h\n\nhttps://a.example/archive/   52w  # yearly\nslow.example never\n";
    expect(parseTtlMap(text, "ttl.txt")).toEqual({
      "news.example": "1h",
      "https://a.example/archive/": "52w",
      "slow.example": "never",
    });
    expect(() => parseTtlMap("a.example 1d\nb.example sometimes\n", "ttl.txt")).toThrow(/ttl\.txt:2 must be a rule/);
    expect(() => parseTtlMap("a.example\n", "m")).toThrow(/m:1/);
    expect(() => parseTtlMap("a b c\n", "m")).toThrow(/m:1/);
  });
});
