// Zstandard's frame structure (RFC 8878, section 3.1) walked beside fzstd, which decodes but checks
// neither a frame's content checksum nor its content size: without this walk a flipped byte inside
// the compressed blocks decoded to other lines and the run ended 0. The walk finds where each
// frame ends and what its header promised (the low 32 bits of XXH64 of its content, seed 0; its
// content size), and refuses what the format forbids (reserved bits and block types, blocks past
// their maximum size, data after a frame that is no frame) and windows past 128 MiB, the most the
// zstd tool decodes without --memory (ZSTD_WINDOWLOG_LIMIT_DEFAULT, 27): fzstd would allocate a
// damaged header's window, up to 2 GiB, before reading a block.

/** What a frame's header promised of its content, told once the frame's last byte is fed. */
export interface FrameEnd {
  /** The content checksum (low 32 bits of XXH64), when the frame has one. */
  readonly checksum: number | undefined;
  /** The content's size in bytes, when the header says it. */
  readonly contentSize: number | undefined;
}

/** Bytes of compressed input, and the frame it ends when it ends one. */
export interface FramePiece {
  readonly bytes: Uint8Array;
  readonly end: FrameEnd | undefined;
}

/** The largest window decoded: 2^27 bytes, zstd's default limit. */
export const MAX_WINDOW = 2 ** 27;
/** The largest block of any frame (Block_Maximum_Size is at most this). */
const MAX_BLOCK = 128 * 1024;
const SKIPPABLE_HIGH = 0x184d2a5;

type State = "magic" | "header" | "skip-size" | "skip" | "block-header" | "block" | "checksum";

/** Walks a Zstandard stream fed in chunks of any size; feed() throws an Error saying what is wrong. */
export class ZstdFrames {
  private state: State = "magic";
  /** Header bytes gathered (at most 18: magic, descriptor, window, dictionary id, content size). */
  private readonly head = new Uint8Array(18);
  private have = 0;
  private need = 4;
  /** Bytes of a block or a skippable frame still to pass. */
  private left = 0;
  private last = false;
  private hasChecksum = false;
  private contentSize: number | undefined;
  private blockMax = MAX_BLOCK;

  /** Whether the bytes fed so far end at a frame's end (or are none). */
  get atBoundary(): boolean {
    return this.state === "magic" && this.have === 0;
  }

  /** `chunk` cut at the frame ends inside it, each piece with the frame it ends. */
  feed(chunk: Uint8Array): FramePiece[] {
    const pieces: FramePiece[] = [];
    let from = 0;
    let at = 0;
    while (at < chunk.length) {
      if (this.state === "block" || this.state === "skip") {
        const n = Math.min(this.left, chunk.length - at);
        at += n;
        this.left -= n;
        if (this.left === 0) {
          const end = this.state === "skip" ? this.frameDone() : this.blockDone();
          if (end !== undefined) {
            pieces.push({ bytes: chunk.subarray(from, at), end });
            from = at;
          }
        }
        continue;
      }
      this.head[this.have++] = chunk[at++];
      if (this.have < this.need) continue;
      const end = this.gathered();
      if (end !== undefined) {
        pieces.push({ bytes: chunk.subarray(from, at), end });
        from = at;
      }
    }
    if (from < chunk.length) pieces.push({ bytes: chunk.subarray(from), end: undefined });
    return pieces;
  }

  /** Acts on the `need` bytes gathered in head; returns the frame ended, if one did. */
  private gathered(): FrameEnd | undefined {
    const h = this.head;
    switch (this.state) {
      case "magic": {
        const magic = (h[0] | (h[1] << 8) | (h[2] << 16) | (h[3] << 24)) >>> 0;
        if (magic === 0xfd2fb528) {
          this.state = "header";
          this.need = 5;
        } else if (magic >>> 4 === SKIPPABLE_HIGH) {
          this.state = "skip-size";
          this.need = 8;
        } else {
          throw new Error("data after a frame that is not a Zstandard frame");
        }
        return undefined;
      }
      case "header": {
        const fhd = h[4];
        if (fhd & 0x08) throw new Error("a frame header's reserved bit is set");
        const single = (fhd >> 5) & 1;
        const fcsFlag = fhd >> 6;
        const dictBytes = [0, 1, 2, 4][fhd & 3];
        const fcsBytes = fcsFlag === 0 ? single : 1 << fcsFlag;
        const size = 5 + (single ? 0 : 1) + dictBytes + fcsBytes;
        if (this.have < size) {
          this.need = size;
          return undefined;
        }
        let window = 0;
        if (!single) {
          const exponent = h[5] >> 3;
          const base = 2 ** (10 + exponent);
          window = base + (base / 8) * (h[5] & 7);
        }
        const fcsAt = 5 + (single ? 0 : 1) + dictBytes;
        let fcs: number | undefined;
        if (fcsBytes > 0) {
          fcs = 0;
          for (let i = fcsBytes - 1; i >= 0; i--) fcs = fcs * 256 + h[fcsAt + i];
          if (fcsBytes === 2) fcs += 256;
        }
        if (single) window = fcs ?? 0;
        if (window > MAX_WINDOW)
          throw new Error(`a frame needs a window of ${window} bytes, past the ${MAX_WINDOW} zstd decodes by default`);
        this.contentSize = fcs;
        this.hasChecksum = ((fhd >> 2) & 1) === 1;
        this.blockMax = Math.min(MAX_BLOCK, Math.max(window, 1));
        this.state = "block-header";
        this.have = 0;
        this.need = 3;
        return undefined;
      }
      case "skip-size":
        this.left = (h[4] | (h[5] << 8) | (h[6] << 16) | (h[7] << 24)) >>> 0;
        this.state = "skip";
        this.have = 0;
        return this.left === 0 ? this.frameDone() : undefined;
      case "block-header": {
        const word = h[0] | (h[1] << 8) | (h[2] << 16);
        this.last = (word & 1) === 1;
        const type = (word >> 1) & 3;
        const size = word >>> 3;
        if (type === 3) throw new Error("a block of the reserved type");
        if (size > this.blockMax) throw new Error(`a block of ${size} bytes, past its frame's ${this.blockMax}`);
        this.left = type === 1 ? 1 : size;
        this.state = "block";
        this.have = 0;
        return this.left === 0 ? this.blockDone() : undefined;
      }
      case "checksum":
        return this.frameDone();
      default:
        throw new Error(`the Zstandard walk reached state ${this.state} while gathering bytes`);
    }
  }

  /** A block's bytes have passed: the next block, the checksum, or the frame's end. */
  private blockDone(): FrameEnd | undefined {
    this.have = 0;
    if (!this.last) {
      this.state = "block-header";
      this.need = 3;
      return undefined;
    }
    if (this.hasChecksum) {
      this.state = "checksum";
      this.need = 4;
      return undefined;
    }
    return this.frameDone();
  }

  /** The frame has ended: what it promised, and the walk back at a frame's start. */
  private frameDone(): FrameEnd {
    const h = this.head;
    const end: FrameEnd =
      this.state === "skip"
        ? { checksum: undefined, contentSize: 0 }
        : {
            checksum: this.state === "checksum" ? (h[0] | (h[1] << 8) | (h[2] << 16) | (h[3] << 24)) >>> 0 : undefined,
            contentSize: this.contentSize,
          };
    this.state = "magic";
    this.have = 0;
    this.need = 4;
    this.contentSize = undefined;
    this.hasChecksum = false;
    return end;
  }
}
