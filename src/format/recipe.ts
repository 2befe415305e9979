// The one persistence recipe of format v1. A serializable kind declares a Recipe: its kind code,
// its name in errors, the length of its parameter block and a reader that checks the parameters
// against the payload's declared length. Every kind is read back through readStored, which
// checks the header, then the parameters, before anything is allocated, and turns every refusal
// (whatever the reader or a validator threw) into a FormatError; the payload then comes either as
// a view of the caller's bytes (payloadOf) or copied into WASM regions and checked where it lies
// (loadRegions). Writing mirrors it: writeContainer for a payload in caller bytes, regionParts /
// writeRegions for payloads that live in WASM memory.
import { ChecksumMismatchError, FormatError, TruncatedInputError } from "../errors.js";
import type { Arena } from "../wasm/arena.js";
import { checksumRegion } from "./checksum.js";
import {
  concat,
  expectParams,
  headChecksum,
  HEADER_BYTES,
  readContainer,
  readHead,
  verifiedPayload,
  writeHead,
  writeTrailer,
  type Container,
  type KindCode,
} from "./container.js";

/** How one kind is read back. */
export interface Recipe<P> {
  /** The kind code the bytes must carry. */
  readonly kind: KindCode;
  /** The structure as errors name it: "a scalable filter". */
  readonly what: string;
  /** Bytes of the parameter block, or, where it varies, its fixed part and the length its first bytes give. */
  readonly paramBytes: number | { readonly minimum: number; readonly of: (params: DataView) => number };
  /** Reads the parameters and checks them against the payload length; allocates nothing. Whatever it throws becomes a FormatError. */
  readonly read: (params: DataView, payloadBytes: number) => P;
}

/** Serialized bytes whose header and parameters were checked, their payload not yet read. */
export interface Stored<P> {
  /** What the recipe read from the parameter block. */
  readonly params: P;
  /** @internal The parsed header. */
  readonly container: Container;
  /** @internal The whole serialized input. */
  readonly bytes: Uint8Array;
}

/** A region of a structure's WebAssembly memory that holds one payload segment. */
export interface Region {
  readonly arena: Arena;
  readonly ptr: number;
  readonly bytes: number;
}

/** Reads the header and the parameters of `bytes` through `recipe`; nothing is allocated, every refusal is a FormatError. */
export function readStored<P>(bytes: unknown, recipe: Recipe<P>): Stored<P> {
  const container = readContainer(bytes, [recipe.kind]);
  const { paramBytes } = recipe;
  if (typeof paramBytes !== "number" && container.params.byteLength < paramBytes.minimum) {
    throw new FormatError(
      `parameter block of ${container.params.byteLength} bytes where at least ${paramBytes.minimum} were expected`,
      "ERR_BAD_PARAMS",
    );
  }
  const view = expectParams(container, typeof paramBytes === "number" ? paramBytes : paramBytes.of(container.params));
  const params = fromStoredParams(recipe.what, () => recipe.read(view, container.payloadBytes));
  return { params, container, bytes: bytes as Uint8Array };
}

/** Bytes of the header and parameters of a structure whose first HEADER_BYTES are `first` (a file's structure is read that far first). */
export function headBytes(first: Uint8Array): number {
  if (first.length < HEADER_BYTES) throw new TruncatedInputError(HEADER_BYTES, first.length);
  return HEADER_BYTES + new DataView(first.buffer, first.byteOffset, first.byteLength).getUint32(12, true);
}

/**
 * Reads the header and parameters of a structure of `total` bytes (a file's) from its first
 * headBytes() bytes through `recipe`, checked as readStored checks them: the payload is read
 * after, into what the parameters say, and checked against `checksum` where it lies.
 */
export function readStoredHead<P>(head: Uint8Array, total: number, recipe: Recipe<P>): StoredHead<P> {
  const container = readHead(head, total, [recipe.kind]);
  const { paramBytes } = recipe;
  if (typeof paramBytes !== "number" && container.params.byteLength < paramBytes.minimum) {
    throw new FormatError(
      `parameter block of ${container.params.byteLength} bytes where at least ${paramBytes.minimum} were expected`,
      "ERR_BAD_PARAMS",
    );
  }
  const view = expectParams(
    { ...container, storedChecksum: 0n },
    typeof paramBytes === "number" ? paramBytes : paramBytes.of(container.params),
  );
  const params = fromStoredParams(recipe.what, () => recipe.read(view, container.payloadBytes));
  return { params, payloadBytes: container.payloadBytes, checksum: headChecksum(container.head) };
}

/** A structure's header and parameters read ahead of its payload (readStoredHead). */
export interface StoredHead<P> {
  readonly params: P;
  readonly payloadBytes: number;
  /** The checksum of the header segment, folded on over each payload segment as it is read. */
  readonly checksum: bigint;
}

/** The payload as a view of the caller's bytes, once the checksum over header and payload holds. */
export function payloadOf(stored: Stored<unknown>): Uint8Array {
  return verifiedPayload(stored.bytes, stored.container);
}

/**
 * Copies the payload into `regions`, in order, one checksum segment each, and verifies the
 * checksum where the bytes now lie (no second copy). The regions must cover the payload exactly.
 */
export function loadRegions(stored: Stored<unknown>, regions: Iterable<Region>): void {
  const { bytes, container } = stored;
  let sum = headChecksum(container.head);
  let at = container.payloadStart;
  for (const region of regions) {
    region.arena.u8.set(bytes.subarray(at, at + region.bytes), region.ptr);
    sum = checksumRegion(sum, region.arena, region.ptr, region.bytes);
    at += region.bytes;
  }
  const end = container.payloadStart + container.payloadBytes;
  if (at !== end)
    throw new FormatError(
      `regions of ${at - container.payloadStart} bytes for a payload of ${container.payloadBytes}`,
      "ERR_BAD_PARAMS",
    );
  if (sum !== container.storedChecksum) throw new ChecksumMismatchError(container.storedChecksum, sum);
}

/** A structure whose payload is `regions`, as consecutive pieces: header, a copy of each region, checksum (for payloads past one array). */
export function* regionParts(kind: KindCode, params: Uint8Array, regions: readonly Region[]): Generator<Uint8Array> {
  const head = regionsHead(kind, params, regions);
  yield head;
  for (const region of regions) yield region.arena.bytes(region.ptr, region.bytes).slice();
  yield writeTrailer(regionsChecksum(head, regions));
}

/** The same bytes as one array, copying each region once; `tooLarge` names the error where no array can hold it. */
export function writeRegions(
  kind: KindCode,
  params: Uint8Array,
  regions: readonly Region[],
  tooLarge: (bytes: number) => Error,
): Uint8Array {
  const head = regionsHead(kind, params, regions);
  const trailer = writeTrailer(regionsChecksum(head, regions));
  return concat([head, ...regions.map((r) => r.arena.bytes(r.ptr, r.bytes)), trailer], tooLarge);
}

function regionsHead(kind: KindCode, params: Uint8Array, regions: readonly Region[]): Uint8Array {
  let total = 0;
  for (const region of regions) total += region.bytes;
  return writeHead(kind, params, total);
}

// Checksummed in place, in WebAssembly memory, before anything is copied out.
function regionsChecksum(head: Uint8Array, regions: readonly Region[]): bigint {
  let sum = headChecksum(head);
  for (const region of regions) sum = checksumRegion(sum, region.arena, region.ptr, region.bytes);
  return sum;
}

/** Runs `make` on stored parameters; a refusal that is not already a FormatError becomes one naming `what`. */
export function fromStoredParams<T>(what: string, make: () => T): T {
  try {
    return make();
  } catch (error) {
    if (error instanceof FormatError) throw error;
    throw new FormatError(`parameters do not describe ${what}: ${(error as Error).message}`, "ERR_BAD_PARAMS");
  }
}
