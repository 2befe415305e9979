// The exact windowed seen-set in this process as a SeenSet (openSeenSet({ backend: "window" })):
// an ExactWindowSet behind the async interface. Each call does its work synchronously before its
// promise is returned, so two calls made in one tick are already ordered.
import { DisposedError } from "../errors.js";
import { ExactWindowSet, type ExactWindowSetOptions } from "../window/exact-window-set.js";
import type { LocalSeenSet, SeenKey, WindowedSeenSet } from "./seen-set.js";

/** An ExactWindowSet as a SeenSet that can be saved (serialize). */
export class ExactWindowSeenSet implements WindowedSeenSet, LocalSeenSet {
  readonly exact = true;
  readonly backend = "window";
  readonly semantics: ExactWindowSet["semantics"];
  private set: ExactWindowSet | undefined;

  /** A set of `options`, from `bytes` of an earlier serialize() when given. */
  constructor(options: ExactWindowSetOptions, bytes?: Uint8Array) {
    this.set = bytes === undefined ? new ExactWindowSet(options) : ExactWindowSet.deserialize(bytes, options);
    this.semantics = this.set.semantics;
  }

  /** 1 where a key was not seen within its TTL; `at`: the time (ms), default the clock. */
  async addMany(keys: readonly SeenKey[], at?: number): Promise<Uint8Array> {
    return this.live().addMany(keys, at);
  }

  /** 1 where a key is seen at `at` (ms; default now). */
  async hasMany(keys: readonly SeenKey[], at?: number): Promise<Uint8Array> {
    return this.live().hasMany(keys, at);
  }

  /** 1 where a key is due at `at` (ms; default now). */
  async dueMany(keys: readonly SeenKey[], at?: number): Promise<Uint8Array> {
    return this.live().dueMany(keys, at);
  }

  /** When each key was last recorded (ms), NaN where it is not seen now. */
  async seenAtMany(keys: readonly SeenKey[]): Promise<Float64Array> {
    return this.live().seenAtMany(keys);
  }

  /** Forgets keys; 1 where a key was seen. */
  async removeMany(keys: readonly SeenKey[]): Promise<Uint8Array> {
    return this.live().removeMany(keys);
  }

  /** Forgets every key of a host and its subdomains recorded until now. */
  async forgetHost(host: string, at?: number): Promise<void> {
    this.live().forgetHost(host, at);
  }

  /** Forgets every key starting with a URL prefix recorded until now. */
  async forgetPrefix(prefix: string, at?: number): Promise<void> {
    this.live().forgetPrefix(prefix, at);
  }

  /** Keys held, expired ones not dropped yet included. */
  async size(): Promise<number> {
    return this.live().size;
  }

  /** Forgets every key and tombstone. */
  async clear(): Promise<void> {
    this.live().clear();
  }

  /** The whole state as bytes (format v1, kind 14), to be given back as `bytes` with the same spec. */
  serialize(): Uint8Array {
    return this.live().serialize();
  }

  /** Releases the memory; later calls throw DisposedError. */
  async close(): Promise<void> {
    this.set?.dispose();
    this.set = undefined;
  }

  private live(): ExactWindowSet {
    if (this.set === undefined) throw new DisposedError(`the window seen-set`);
    return this.set;
  }
}
