// What the exact windowed Durable Object seen-set's client and object agree on, beside the plain
// protocol (protocol.ts: the shard headers, the per-call limit, errors as JSON): POSTs to
// /window/<operation> whose body is a head (JSON: the protocol version, the set's TTLs and
// semantics, the time of the call when the client gives one, a host or prefix to forget) and the
// keys themselves, which the object needs whole (TTL rules and tombstones match their hosts).
import { CrawlsieveError } from "../index.workerd.js";
import type { Ttl, TtlMap, WindowSemantics } from "../window/ttl-rules.js";

/** The version of the window protocol: an object refuses a head of another (ERR_UNSUPPORTED_VERSION). */
export const WINDOW_PROTOCOL = 1;

/** Most key bytes one call carries (beside at most ROW_FINGERPRINTS keys): a batch is cut into calls below it. */
export const CALL_BYTES = 4 << 20;

/** The operations a windowed object answers, as /window/<operation>. */
export type WindowOperation =
  | "add"
  | "has"
  | "due"
  | "seen-at"
  | "remove"
  | "forget-host"
  | "forget-prefix"
  | "size"
  | "clear"
  | "claim";

/** The head of a windowed call. */
export interface WindowHead {
  /** WINDOW_PROTOCOL of the client. */
  readonly v: number;
  readonly ttl: Ttl;
  readonly ttlMap?: TtlMap;
  readonly semantics?: WindowSemantics;
  /** The call's time (ms since the epoch) when the client has a clock of its own; else the object's. */
  readonly at?: number;
  /** The host or URL prefix of forget-host and forget-prefix. */
  readonly pattern?: string;
}

const encoder = new TextEncoder();

/** A call's body: u32 LE bytes of the head's JSON, the JSON, u32 LE key count, then each key as u32 LE length and bytes. */
export function encodeCall(head: WindowHead, keys: readonly Uint8Array[] = []): Uint8Array {
  const json = encoder.encode(JSON.stringify(head));
  const size = 8 + json.length + keys.reduce((n, key) => n + 4 + key.length, 0);
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  view.setUint32(0, json.length, true);
  out.set(json, 4);
  let at = 4 + json.length;
  view.setUint32(at, keys.length, true);
  at += 4;
  for (const key of keys) {
    view.setUint32(at, key.length, true);
    out.set(key, at + 4);
    at += 4 + key.length;
  }
  return out;
}

/** A call's head and keys; a body that is not one is ERR_INVALID_ARGUMENT, another protocol ERR_UNSUPPORTED_VERSION. */
export function decodeCall(body: Uint8Array): { head: WindowHead; keys: Uint8Array[] } {
  const bad = () => new CrawlsieveError("ERR_INVALID_ARGUMENT", "the body of a window call is not a head and keys");
  const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
  if (body.length < 8) throw bad();
  const headBytes = view.getUint32(0, true);
  if (8 + headBytes > body.length) throw bad();
  let head: WindowHead;
  try {
    head = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(body.subarray(4, 4 + headBytes)));
  } catch {
    throw bad();
  }
  if (head === null || typeof head !== "object") throw bad();
  if (head.v !== WINDOW_PROTOCOL)
    throw new CrawlsieveError(
      "ERR_UNSUPPORTED_VERSION",
      `this object speaks window protocol ${WINDOW_PROTOCOL}; the call spoke ${JSON.stringify(head.v)}`,
    );
  let at = 4 + headBytes;
  const count = view.getUint32(at, true);
  at += 4;
  const keys: Uint8Array[] = [];
  for (let i = 0; i < count; i++) {
    if (at + 4 > body.length) throw bad();
    const length = view.getUint32(at, true);
    if (at + 4 + length > body.length) throw bad();
    keys.push(body.subarray(at + 4, at + 4 + length));
    at += 4 + length;
  }
  if (at !== body.length) throw bad();
  return { head, keys };
}
