// Serialization format v1, shared by every structure. Little-endian throughout:
//   0  4  magic "CSIV"
//   4  2  format version (1)
//   6  2  kind (see Kind)
//   8  2  hash scheme (1: h1 = XXH64 seed 0, h2 = splitmix64(h1) | 1, positions
//          floor(((h1 + i h2) mod 2^64) * m / 2^64), bits LSB first; see assembly/bloom.ts)
//  10  2  flags (0; reserved)
//  12  4  parameter bytes P
//  16  8  payload bytes L
//  24  P  parameters (kind-specific)
//  24+P L payload (kind-specific segments)
//  end 8  checksum (see checksum.ts) over header + parameters, then each payload segment
import { ChecksumMismatchError, FormatError, TruncatedInputError, UnsupportedVersionError } from "../errors.js";
import { checksumBytes } from "./checksum.js";

/** "CSIV" */
export const MAGIC = 0x56495343;
/** The format version this build writes and reads. */
export const FORMAT_VERSION = 1;
/** The only hash scheme so far. */
export const HASH_SCHEME = 1;
/** Bytes before the parameters. */
export const HEADER_BYTES = 24;
/** Bytes of the trailing checksum. */
export const TRAILER_BYTES = 8;

/** What a serialized structure is. */
export const Kind = {
  BloomFilter: 1,
  BlockedBloomFilter: 2,
  ScalableBloomFilter: 3,
  CountingBloomFilter: 4,
  TimeWindowFilter: 5,
  AgePartitionedFilter: 6,
  MultiDimBloomFilter: 7,
  IdfTable: 8,
  NearDupIndex: 9,
  MinHashIndex: 10,
  FingerprintSet: 11,
  Deduplicator: 12,
  NearDupFilter: 13,
  ExactWindowSet: 14,
  DiskPartIndex: 15,
} as const;
/** A kind code. */
export type KindCode = (typeof Kind)[keyof typeof Kind];

const KIND_NAMES = new Map<number, string>(Object.entries(Kind).map(([name, code]) => [code, name]));

/** A parsed header: where the parameters and the payload are. */
export interface Container {
  readonly kind: KindCode;
  readonly params: DataView;
  /** Header + parameters, the first checksum segment. */
  readonly head: Uint8Array;
  readonly payloadStart: number;
  readonly payloadBytes: number;
  readonly storedChecksum: bigint;
}

/** Builds header + parameters for a payload of `payloadBytes`. */
export function writeHead(kind: KindCode, params: Uint8Array, payloadBytes: number): Uint8Array {
  const head = new Uint8Array(HEADER_BYTES + params.length);
  const view = new DataView(head.buffer);
  view.setUint32(0, MAGIC, true);
  view.setUint16(4, FORMAT_VERSION, true);
  view.setUint16(6, kind, true);
  view.setUint16(8, HASH_SCHEME, true);
  view.setUint16(10, 0, true);
  view.setUint32(12, params.length, true);
  view.setBigUint64(16, BigInt(payloadBytes), true);
  head.set(params, HEADER_BYTES);
  return head;
}

/** The 8-byte trailer holding `checksum`. */
export function writeTrailer(checksum: bigint): Uint8Array {
  const trailer = new Uint8Array(TRAILER_BYTES);
  new DataView(trailer.buffer).setBigUint64(0, checksum, true);
  return trailer;
}

/** Validates the header of `bytes` (magic, version, kind, scheme, lengths) before anything is allocated. */
export function readContainer(bytes: unknown, expected: readonly KindCode[]): Container {
  if (!(bytes instanceof Uint8Array))
    throw new FormatError(`serialized input must be a Uint8Array, got ${typeof bytes}`, "ERR_INVALID_ARGUMENT");
  const head = readHead(bytes, bytes.length, expected);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return { ...head, storedChecksum: view.getBigUint64(bytes.length - TRAILER_BYTES, true) };
}

/**
 * Validates a header (magic, version, kind, scheme, lengths) against the `total` bytes of the
 * whole input, of which `bytes` holds at least the first HEADER_BYTES (and, to return, the
 * parameters): a file's structure is checked from its first bytes before its payload is read.
 */
export function readHead(
  bytes: Uint8Array,
  total: number,
  expected: readonly KindCode[],
): Omit<Container, "storedChecksum"> {
  if (total < HEADER_BYTES) throw new TruncatedInputError(HEADER_BYTES, total);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const magic = view.getUint32(0, true);
  if (magic !== MAGIC) {
    throw new FormatError(
      `not a crawlsieve structure: magic 0x${magic.toString(16).padStart(8, "0")} (expected "CSIV")`,
      "ERR_BAD_MAGIC",
    );
  }
  const version = view.getUint16(4, true);
  if (version !== FORMAT_VERSION) throw new UnsupportedVersionError(version, FORMAT_VERSION);
  const kind = view.getUint16(6, true) as KindCode;
  if (!expected.includes(kind)) {
    const want = expected.map((code) => KIND_NAMES.get(code)).join(" or ");
    throw new FormatError(
      `serialized kind ${kind} (${KIND_NAMES.get(kind) ?? "unknown"}) where ${want} was expected`,
      "ERR_WRONG_KIND",
    );
  }
  const scheme = view.getUint16(8, true);
  if (scheme !== HASH_SCHEME) throw new FormatError(`unknown hash scheme ${scheme}`, "ERR_BAD_PARAMS");
  const flags = view.getUint16(10, true);
  if (flags !== 0) throw new FormatError(`unknown flags 0x${flags.toString(16)}`, "ERR_BAD_PARAMS");
  const paramBytes = view.getUint32(12, true);
  const payloadBig = view.getBigUint64(16, true);
  if (payloadBig > BigInt(Number.MAX_SAFE_INTEGER))
    throw new FormatError(`payload length ${payloadBig} is impossible`, "ERR_BAD_PARAMS");
  const payloadBytes = Number(payloadBig);
  const declared = HEADER_BYTES + paramBytes + payloadBytes + TRAILER_BYTES;
  if (total < declared) throw new TruncatedInputError(declared, total);
  if (total > declared) {
    throw new FormatError(
      `serialized input has ${total - declared} bytes after its end (declared ${declared} bytes)`,
      "ERR_TRAILING_BYTES",
    );
  }
  const payloadStart = HEADER_BYTES + paramBytes;
  if (bytes.length < payloadStart) throw new RangeError(`a header read without its ${paramBytes} parameter bytes`);
  return {
    kind,
    params: new DataView(bytes.buffer, bytes.byteOffset + HEADER_BYTES, paramBytes),
    head: bytes.subarray(0, payloadStart),
    payloadStart,
    payloadBytes,
  };
}

/** Reads the parameter block, checking its length first. */
export function expectParams(container: Container, bytes: number): DataView {
  if (container.params.byteLength !== bytes) {
    throw new FormatError(
      `parameter block of ${container.params.byteLength} bytes where ${bytes} were expected`,
      "ERR_BAD_PARAMS",
    );
  }
  return container.params;
}

/** The checksum of the header segment. */
export function headChecksum(head: Uint8Array): bigint {
  return checksumBytes(0n, head);
}

/** A whole serialized structure whose payload is in caller bytes: header, payload, checksum over both. */
export function writeContainer(
  kind: KindCode,
  params: Uint8Array,
  payload: Uint8Array,
  tooLarge: (bytes: number) => Error,
): Uint8Array {
  const head = writeHead(kind, params, payload.length);
  return concat([head, payload, writeTrailer(checksumBytes(headChecksum(head), payload))], tooLarge);
}

/** The payload of `bytes` (a view), once the stored checksum over header and payload is verified. */
export function verifiedPayload(bytes: Uint8Array, container: Container): Uint8Array {
  const payload = bytes.subarray(container.payloadStart, container.payloadStart + container.payloadBytes);
  const sum = checksumBytes(headChecksum(container.head), payload);
  if (sum !== container.storedChecksum) throw new ChecksumMismatchError(container.storedChecksum, sum);
  return payload;
}

/** Joins parts into one array, refusing sizes no typed array can hold. */
export function concat(parts: readonly Uint8Array[], tooLarge: (bytes: number) => Error): Uint8Array {
  let total = 0;
  for (const part of parts) total += part.length;
  if (total > MAX_BYTE_ARRAY) throw tooLarge(total);
  const out = new Uint8Array(total);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** Largest Uint8Array the engines we target create (2^32 - 1 bytes on 64-bit V8). */
export const MAX_BYTE_ARRAY = 2 ** 32 - 1;

/** Length-prefixed (u64) pieces: how composite kinds (scalable, time window) store their parts. */
export function nestParts(parts: readonly Uint8Array[]): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (const bytes of parts) {
    const length = new Uint8Array(8);
    new DataView(length.buffer).setBigUint64(0, BigInt(bytes.length), true);
    out.push(length, bytes);
  }
  return out;
}

/** Reads `count` length-prefixed parts that must fill `payload` exactly; `what` names a part in errors. */
export function unnestParts(payload: Uint8Array, count: number, what: string): Uint8Array[] {
  const view = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
  const parts: Uint8Array[] = [];
  let at = 0;
  for (let i = 0; i < count; i++) {
    if (at + 8 > payload.length) throw new FormatError(`${what} ${i} of ${count} is missing`, "ERR_BAD_PARAMS");
    const length = Number(view.getBigUint64(at, true));
    if (at + 8 + length > payload.length)
      throw new FormatError(`${what} ${i} declares ${length} bytes past the payload`, "ERR_BAD_PARAMS");
    parts.push(payload.subarray(at + 8, at + 8 + length));
    at += 8 + length;
  }
  if (at !== payload.length)
    throw new FormatError(`${payload.length - at} stray bytes after the last ${what}`, "ERR_BAD_PARAMS");
  return parts;
}
