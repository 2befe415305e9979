// A saved near-duplicate index (`near-dups --dedup --save-index DIR`, read back by `--against DIR`):
// what a later run needs to deduplicate new records against this run's kept ones without their
// texts. One entry a document (exact duplicates are one document): its bottom-k sketch (its count,
// then its values, u32 little-endian, in sketches.bin), its LSH band keys (keys.bin), the id of the
// record that stands for it (ids.jsonl) and whether it was kept (kept.bin: 1 kept, 0 removed, 2
// without a word). index.json names the format and version, the sketch parameters, the threshold,
// and each file's size and XXH64; it is written last, by rename, so a save cut short leaves no
// index that loads. A load checks every file against it before the run goes on.
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync } from "node:fs";
import { join } from "node:path";
import { CrawlsieveError, InvalidArgumentError } from "../../errors.js";
import { readAt, writeAt } from "../../files/file-range.js";
import { Xxh64Stream } from "../../hash/xxh64-stream.js";
import type { SketchParams, Sketches } from "../../near-dup/minhash.js";

const FORMAT = "crawlsieve-near-dups-index";
const VERSION = 1;
const FILES = ["sketches.bin", "keys.bin", "ids.jsonl", "kept.bin"] as const;
type FileName = (typeof FILES)[number];
/** Bytes written or read at once. */
const CHUNK = 1 << 20;
/** Documents handed to the engine at once when an index is loaded. */
const LOAD_DOCS = 512;

/** What index.json says. */
interface Manifest {
  readonly format: string;
  readonly version: number;
  readonly params: SketchParams;
  readonly threshold: number;
  readonly documents: number;
  readonly files: Record<FileName, { readonly bytes: number; readonly xxh64: string }>;
}

/** A file of the index written in order, its bytes counted and hashed as they go. */
class IndexFile {
  private readonly fd: number;
  private readonly hash = new Xxh64Stream();
  private readonly buffer = new Uint8Array(CHUNK);
  private used = 0;
  bytes = 0;

  constructor(dir: string, name: FileName) {
    this.fd = openSync(join(dir, name), "w");
  }

  write(bytes: Uint8Array): void {
    for (let at = 0; at < bytes.length; ) {
      const n = Math.min(bytes.length - at, CHUNK - this.used);
      this.buffer.set(bytes.subarray(at, at + n), this.used);
      this.used += n;
      at += n;
      if (this.used === CHUNK) this.flush();
    }
  }

  /** Writes what is buffered, syncs and closes; returns the file's entry of index.json. */
  end(): { bytes: number; xxh64: string } {
    this.flush();
    fsyncSync(this.fd);
    closeSync(this.fd);
    return { bytes: this.bytes, xxh64: this.hash.digest().toString(16).padStart(16, "0") };
  }

  private flush(): void {
    const piece = this.buffer.subarray(0, this.used);
    writeAt(this.fd, piece);
    this.hash.update(piece);
    this.bytes += piece.length;
    this.used = 0;
  }

  /** Closes without syncing (a failed save). */
  abandon(): void {
    try {
      closeSync(this.fd);
    } catch {
      // already closed
    }
  }
}

/** Writes an index as the run goes: sketches and band keys as they are made, ids and kept flags at the end. */
export class IndexWriter {
  private readonly sketches: IndexFile;
  private readonly keys: IndexFile;
  private documents = 0;

  /** Makes `dir` (it must not exist, or be empty) for an index of sketches made with `params`. */
  constructor(
    private readonly dir: string,
    private readonly params: SketchParams,
    private readonly threshold: number,
  ) {
    if (existsSync(dir) && readdirSync(dir).length > 0)
      throw new InvalidArgumentError("--save-index", dir, "a folder that does not exist yet, or an empty one");
    try {
      mkdirSync(dir, { recursive: true });
      this.sketches = new IndexFile(dir, "sketches.bin");
      this.keys = new IndexFile(dir, "keys.bin");
    } catch (error) {
      throw failedSave(dir, error);
    }
  }

  /** Appends a batch of documents' sketches, in document order. */
  add(batch: Sketches): void {
    const stride = this.params.k + 1;
    try {
      for (let i = 0; i < batch.count; i++) {
        const words = batch.values[i * stride] + 1;
        const sketch = batch.values.subarray(i * stride, i * stride + words);
        this.sketches.write(new Uint8Array(sketch.buffer, sketch.byteOffset, 4 * words));
      }
      const keys = batch.keys.subarray(0, batch.count * this.params.bands);
      this.keys.write(new Uint8Array(keys.buffer, keys.byteOffset, 4 * keys.length));
    } catch (error) {
      throw failedSave(this.dir, error);
    }
    this.documents += batch.count;
  }

  /** Ends the index: each document's id (as JSON) and kept flag, then index.json. */
  finish(idOf: (doc: number) => string, kept: Uint8Array): void {
    if (kept.length !== this.documents)
      throw new CrawlsieveError(
        "ERR_INTERNAL",
        `an index of ${this.documents} documents was given ${kept.length} kept flags`,
      );
    try {
      const ids = new IndexFile(this.dir, "ids.jsonl");
      for (let d = 0; d < this.documents; d++) ids.write(Buffer.from(`${idOf(d)}\n`));
      const flags = new IndexFile(this.dir, "kept.bin");
      flags.write(kept);
      const manifest: Manifest = {
        format: FORMAT,
        version: VERSION,
        params: this.params,
        threshold: this.threshold,
        documents: this.documents,
        files: {
          "sketches.bin": this.sketches.end(),
          "keys.bin": this.keys.end(),
          "ids.jsonl": ids.end(),
          "kept.bin": flags.end(),
        },
      };
      const part = join(this.dir, "index.json.part");
      const fd = openSync(part, "w");
      writeAt(fd, Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`));
      fsyncSync(fd);
      closeSync(fd);
      renameSync(part, join(this.dir, "index.json"));
      const folder = openSync(this.dir, "r");
      fsyncSync(folder);
      closeSync(folder);
    } catch (error) {
      throw failedSave(this.dir, error);
    }
  }

  /** Lets the files go after a failed run (no index.json is written, so nothing loads). */
  abandon(): void {
    this.sketches.abandon();
    this.keys.abandon();
  }
}

/** A saved index, its manifest checked; load() hands its kept documents to the engine. */
export class SavedIndex {
  readonly params: SketchParams;
  readonly threshold: number;
  private readonly manifest: Manifest;

  /** Opens the index in `dir`, given to `flag` (--against or --index, named in errors). */
  constructor(
    readonly dir: string,
    readonly flag: "--against" | "--index" = "--against",
  ) {
    const corrupt = (dir: string, why: string) => corruptIndex(flag, dir, why);
    const path = join(dir, "index.json");
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch (error) {
      throw corrupt(
        dir,
        `it has no readable index.json (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}): not an index saved by --save-index, or a save cut short`,
      );
    }
    let manifest: Manifest;
    try {
      manifest = JSON.parse(text) as Manifest;
    } catch {
      throw corrupt(dir, "its index.json is not JSON");
    }
    if (manifest?.format !== FORMAT || manifest.version !== VERSION)
      throw corrupt(dir, `its index.json is not a ${FORMAT} of version ${VERSION}`);
    const p = manifest.params;
    const whole = (x: unknown, max: number) => Number.isInteger(x) && (x as number) >= 1 && (x as number) <= max;
    if (
      !whole(p?.shingle, 64) ||
      !whole(p.k, 4096) ||
      !whole(p.bands, 4096) ||
      !whole(p.rows, 4096) ||
      !whole(manifest.documents + 1, 2 ** 32) ||
      !(manifest.threshold > 0 && manifest.threshold <= 1)
    )
      throw corrupt(dir, "its index.json holds parameters out of range");
    for (const name of FILES)
      if (!Number.isSafeInteger(manifest.files?.[name]?.bytes) || typeof manifest.files[name].xxh64 !== "string")
        throw corrupt(dir, `its index.json does not describe ${name}`);
    this.manifest = manifest;
    this.params = { shingle: p.shingle, k: p.k, bands: p.bands, rows: p.rows };
    this.threshold = manifest.threshold;
  }

  /**
   * Hands the kept documents to `add` in batches, as sketchMany lays sketches out, and their ids
   * (JSON) to `id` in the same order. The files are read once, in chunks, each checked against its
   * size and XXH64 in index.json as it ends: a damaged index throws before the run reads its input.
   */
  load(add: (batch: Sketches) => void, id: (json: string) => void, all = false): number {
    const corrupt = (dir: string, why: string) => corruptIndex(this.flag, dir, why);
    const { documents } = this.manifest;
    const { k, bands } = this.params;
    const files = Object.fromEntries(
      FILES.map((name) => [name, new CheckedReader(this.dir, name, this.manifest.files[name], this.flag)]),
    ) as Record<FileName, CheckedReader>;
    const stride = k + 1;
    let values = new Uint32Array(LOAD_DOCS * stride);
    let batchKeys = new Uint32Array(LOAD_DOCS * bands);
    let count = 0;
    let loaded = 0;
    const hand = () => {
      if (count === 0) return;
      add({
        params: this.params,
        count,
        values: values.subarray(0, count * stride),
        keys: batchKeys.subarray(0, count * bands),
      });
      loaded += count;
      values = new Uint32Array(LOAD_DOCS * stride);
      batchKeys = new Uint32Array(LOAD_DOCS * bands);
      count = 0;
    };
    try {
      for (let d = 0; d < documents; d++) {
        const flag = files["kept.bin"].read(1)[0];
        const keys = files["keys.bin"].read(4 * bands);
        const n = files["sketches.bin"].read(4).readUInt32LE(0);
        if (n > k) throw corrupt(this.dir, `sketches.bin holds a sketch of ${n} values at document ${d}, past ${k}`);
        const sketch = files["sketches.bin"].read(4 * n);
        const json = files["ids.jsonl"].line();
        // Kept documents (--against), or every document with words (--index re-clusters them all).
        if (flag !== 1 && !(all && flag === 0)) continue;
        values[count * stride] = n;
        for (let i = 0; i < n; i++) values[count * stride + 1 + i] = sketch.readUInt32LE(4 * i);
        for (let b = 0; b < bands; b++) batchKeys[count * bands + b] = keys.readUInt32LE(4 * b);
        id(json);
        count++;
        if (count === LOAD_DOCS) hand();
      }
      for (const file of Object.values(files)) file.end();
    } finally {
      for (const file of Object.values(files)) file.close();
    }
    hand();
    return loaded;
  }
}

/** A file of the index read in order, in chunks, held to its size and XXH64 in index.json. */
class CheckedReader {
  private readonly fd: number;
  private readonly hash = new Xxh64Stream();
  private buffer = Buffer.alloc(0);
  private at = 0;
  /** Bytes of the file read into buffers so far. */
  private read_ = 0;

  constructor(
    private readonly dir: string,
    private readonly name: FileName,
    private readonly want: { readonly bytes: number; readonly xxh64: string },
    private readonly flag: string,
  ) {
    const corrupt = (dir: string, why: string) => corruptIndex(flag, dir, why);
    try {
      this.fd = openSync(join(dir, name), "r");
    } catch (error) {
      throw corrupt(dir, `${name} cannot be opened (${(error as NodeJS.ErrnoException).code})`);
    }
  }

  /** The next `n` bytes (a view valid until the next call). */
  read(n: number): Buffer {
    if (this.buffer.length - this.at < n) this.fill(n);
    const out = this.buffer.subarray(this.at, this.at + n);
    this.at += n;
    return out;
  }

  /** The next line, without its "\n". */
  line(): string {
    for (;;) {
      const end = this.buffer.indexOf(0x0a, this.at);
      if (end >= 0) {
        const text = this.buffer.toString("utf8", this.at, end);
        this.at = end + 1;
        return text;
      }
      if (this.buffer.length - this.at > 1 << 20)
        throw corruptIndex(this.flag, this.dir, `${this.name} holds a line past 1 MiB`);
      this.fill(this.buffer.length - this.at + 1);
    }
  }

  /** Checks that the file ends here and matches its checksum. */
  end(): void {
    if (
      this.at !== this.buffer.length ||
      this.read_ !== this.want.bytes ||
      readAt(this.fd, Buffer.alloc(1), this.read_) !== 0
    )
      throw corruptIndex(this.flag, this.dir, `${this.name} is not the ${this.want.bytes} bytes its index.json says`);
    if (this.hash.digest().toString(16).padStart(16, "0") !== this.want.xxh64)
      throw corruptIndex(this.flag, this.dir, `${this.name} does not match its checksum in index.json (damaged)`);
  }

  close(): void {
    try {
      closeSync(this.fd);
    } catch {
      // already closed
    }
  }

  /** Makes at least `n` unread bytes available, reading chunks of the file; the file ending first is damage. */
  private fill(n: number): void {
    const left = this.buffer.subarray(this.at);
    const room = Math.max(n, CHUNK);
    const next = Buffer.alloc(left.length + Math.min(room, Math.max(0, this.want.bytes - this.read_)));
    left.copy(next);
    let have = left.length;
    while (have < next.length) {
      const got = readAt(this.fd, next.subarray(have), this.read_);
      if (got === 0) break;
      this.hash.update(next.subarray(have, have + got));
      this.read_ += got;
      have += got;
    }
    this.buffer = next.subarray(0, have);
    this.at = 0;
    if (have < n)
      throw corruptIndex(this.flag, this.dir, `${this.name} ends before its documents do (cut short or damaged)`);
  }
}

/** The run's sketch parameters against the index's: refused naming both when they differ. */
export function checkAgainst(index: SavedIndex, params: SketchParams): void {
  const q = index.params;
  for (const [flag, mine, theirs] of [
    ["--shingle", params.shingle, q.shingle],
    ["--sketch-size", params.k, q.k],
    ["LSH bands (from --threshold)", params.bands, q.bands],
    ["LSH rows (from --threshold)", params.rows, q.rows],
  ] as const)
    if (mine !== theirs)
      throw new CrawlsieveError(
        "ERR_INDEX_MISMATCH",
        `${index.flag} ${index.dir}: the index was made with ${flag} ${theirs} (threshold ${index.threshold}), this run has ${mine}; give the index's parameters or leave them out`,
      );
}

function corruptIndex(flag: string, dir: string, why: string): CrawlsieveError {
  return new CrawlsieveError("ERR_INDEX_CORRUPT", `${flag} ${dir}: ${why}`);
}

function failedSave(dir: string, error: unknown): CrawlsieveError {
  if (error instanceof CrawlsieveError) return error;
  return new CrawlsieveError(
    "ERR_SAVE_INDEX",
    `--save-index ${dir}: cannot write the index (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
  );
}
