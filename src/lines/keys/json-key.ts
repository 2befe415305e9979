// The key `dedup --json-key` compares: the value at a dotted path of a JSON line, read from the
// line's bytes by a strict RFC 8259 scanner, never through JSON.parse. A double would merge
// integer ids past 2^53 (Snowflake ids differ in exactly those bits), `1e400` with `null`, and a
// decoder would make strings that differ only in invalid UTF-8 bytes one U+FFFD string. So the key
// is the value's own text, canonical only where JSON says two spellings are one value:
// - whitespace between tokens is dropped;
// - a string's escapes are resolved and it is written back with JSON.stringify's escapes (so
//   "\u0061" is "a", and raw bytes, invalid UTF-8 included, stay as they are);
// - numbers and literals are their text as written (1.0, 1 and 1e0 are three keys);
// - members and elements keep their order; a repeated member name takes the last, as JSON.parse.
// Values nested deeper than MAX_DEPTH are refused by name (recursion stays bounded).

/** Containers nested deeper than this make a line's key unreadable (a typed error, not a stack overflow). */
export const MAX_DEPTH = 1000;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const HEX = "0123456789abcdef";
/** JSON.stringify's two-character escapes, by byte. */
const SHORT_ESCAPE: Record<number, number> = {
  0x08: 0x62,
  0x09: 0x74,
  0x0a: 0x6e,
  0x0c: 0x66,
  0x0d: 0x72,
  0x22: 0x22,
  0x5c: 0x5c,
};

/** Why a line has no key: thrown inside the scan, turned into the record's message. */
class NoKey extends Error {}

/** A growable byte buffer, reused from line to line. */
class Bytes {
  buffer = new Uint8Array(256);
  length = 0;

  push(byte: number): void {
    if (this.length === this.buffer.length) this.grow(1);
    this.buffer[this.length++] = byte;
  }

  append(data: Uint8Array, start: number, end: number): void {
    if (this.length + end - start > this.buffer.length) this.grow(end - start);
    this.buffer.set(data.subarray(start, end), this.length);
    this.length += end - start;
  }

  private grow(extra: number): void {
    const next = new Uint8Array(Math.max(2 * this.buffer.length, this.length + extra));
    next.set(this.buffer.subarray(0, this.length));
    this.buffer = next;
  }
}

/** The key of one JSON line: the canonical bytes of the value at `path`. */
export class JsonKeyReader {
  private readonly names: readonly Uint8Array[];
  private readonly out = new Bytes();
  private readonly name = new Bytes();
  private data: Uint8Array = new Uint8Array(0);
  private at = 0;
  private end = 0;
  /** Where the last member at the whole path was written in `out`, or -1. */
  private found = -1;
  private foundEnd = -1;

  constructor(private readonly path: readonly string[]) {
    const encoder = new TextEncoder();
    this.names = path.map((name) => encoder.encode(name));
  }

  /**
   * The key of the line data[start, end): its canonical bytes (a view valid until the next call)
   * and where the value stands in the line (the caller keeps a span of the line when the two are
   * equal), or the reason it has none.
   */
  read(data: Uint8Array, start: number, end: number): { key: Uint8Array; rawStart: number; rawEnd: number } | string {
    this.data = data;
    this.at = start;
    this.end = end;
    this.startOfLine = start;
    this.out.length = 0;
    this.found = -1;
    this.foundEnd = -1;
    let rawStart = -1;
    let rawEnd = -1;
    try {
      this.space();
      if (this.peek() !== 0x7b) {
        this.value(0, false);
        this.tail();
        return this.noKey();
      }
      const spans = this.object(0, 0);
      rawStart = spans[0];
      rawEnd = spans[1];
      this.tail();
    } catch (error) {
      if (error instanceof NoKey) return error.message;
      throw error;
    }
    if (this.found === -1) return this.noKey();
    return { key: this.out.buffer.subarray(this.found, this.foundEnd), rawStart, rawEnd };
  }

  private noKey(): string {
    return `no key ${JSON.stringify(this.path.join("."))}`;
  }

  private fail(what: string): never {
    if (this.at >= this.end)
      throw new NoKey(`not JSON (${what}: the line ends at byte ${this.at - this.lineStart() + 1})`);
    const byte = this.data[this.at];
    const shown =
      byte >= 0x20 && byte < 0x7f ? `'${String.fromCharCode(byte)}'` : `0x${byte.toString(16).padStart(2, "0")}`;
    throw new NoKey(`not JSON (${what}: ${shown} at byte ${this.at - this.lineStart() + 1})`);
  }

  /** Where the line starts, for the byte numbers of messages. */
  private startOfLine = 0;
  private lineStart(): number {
    return this.startOfLine;
  }

  private peek(): number {
    return this.at < this.end ? this.data[this.at] : -1;
  }

  private space(): void {
    while (this.at < this.end) {
      const byte = this.data[this.at];
      if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0a && byte !== 0x0d) return;
      this.at++;
    }
  }

  /** Only whitespace may follow the top-level value. */
  private tail(): void {
    this.space();
    if (this.at < this.end) this.fail("unexpected bytes after the value");
  }

  private expect(byte: number, what: string): void {
    if (this.peek() !== byte) this.fail(what);
    this.at++;
  }

  /**
   * An object at the path's `level`: every member checked, the one named path[level] followed
   * (the last of that name wins). Returns [start, end) of the member value found at the whole path
   * in the line, or [-1, -1].
   */
  private object(depth: number, level: number): [number, number] {
    if (depth >= MAX_DEPTH) throw new NoKey(`a value nested deeper than ${MAX_DEPTH.toLocaleString("en-US")} levels`);
    let raw: [number, number] = [-1, -1];
    this.at++; // {
    this.space();
    if (this.peek() === 0x7d) {
      this.at++;
      return raw;
    }
    for (;;) {
      this.space();
      if (this.peek() !== QUOTE) this.fail("expected a member name");
      this.name.length = 0;
      this.string(this.name, false);
      this.space();
      this.expect(0x3a, "expected ':'");
      this.space();
      if (this.isName(level)) {
        if (level === this.names.length - 1) {
          // The key: written at the end of `out` (an earlier member of the same name is left behind).
          const start = this.out.length;
          const rawStart = this.at;
          this.value(depth + 1, true);
          this.found = start;
          this.foundEnd = this.out.length;
          raw = [rawStart, this.at];
        } else if (this.peek() === 0x7b) {
          // A later member of the same name replaces what an earlier one held, found or not.
          this.found = -1;
          raw = this.object(depth + 1, level + 1);
        } else {
          this.value(depth + 1, false);
          this.found = -1;
          raw = [-1, -1];
        }
      } else {
        this.value(depth + 1, false);
      }
      this.space();
      const next = this.peek();
      if (next === 0x2c) {
        this.at++;
        continue;
      }
      if (next === 0x7d) {
        this.at++;
        return raw;
      }
      this.fail("expected ',' or '}'");
    }
  }

  /** Whether the member name just read is path[level]. */
  private isName(level: number): boolean {
    const want = this.names[level];
    if (want.length !== this.name.length) return false;
    for (let i = 0; i < want.length; i++) if (want[i] !== this.name.buffer[i]) return false;
    return true;
  }

  /** Any value, checked; written canonically to `out` when `write`. */
  private value(depth: number, write: boolean): void {
    const byte = this.peek();
    if (byte === QUOTE) return this.string(this.out, write);
    if (byte === 0x7b || byte === 0x5b) return this.container(depth, write);
    if (byte === 0x74) return this.literal("true", write);
    if (byte === 0x66) return this.literal("false", write);
    if (byte === 0x6e) return this.literal("null", write);
    if (byte === 0x2d || (byte >= 0x30 && byte <= 0x39)) return this.number(write);
    this.fail("expected a value");
  }

  /** An object or array, any member names (none is followed). */
  private container(depth: number, write: boolean): void {
    if (depth >= MAX_DEPTH) throw new NoKey(`a value nested deeper than ${MAX_DEPTH.toLocaleString("en-US")} levels`);
    const object = this.peek() === 0x7b;
    const close = object ? 0x7d : 0x5d;
    if (write) this.out.push(this.data[this.at]);
    this.at++;
    this.space();
    if (this.peek() === close) {
      this.at++;
      if (write) this.out.push(close);
      return;
    }
    for (;;) {
      this.space();
      if (object) {
        if (this.peek() !== QUOTE) this.fail("expected a member name");
        this.string(this.out, write);
        this.space();
        this.expect(0x3a, "expected ':'");
        if (write) this.out.push(0x3a);
        this.space();
      }
      this.value(depth + 1, write);
      this.space();
      const next = this.peek();
      if (next === 0x2c) {
        this.at++;
        if (write) this.out.push(0x2c);
        continue;
      }
      if (next === close) {
        this.at++;
        if (write) this.out.push(close);
        return;
      }
      this.fail(object ? "expected ',' or '}'" : "expected ',' or ']'");
    }
  }

  private literal(text: string, write: boolean): void {
    for (let i = 0; i < text.length; i++) {
      if (this.peek() !== text.charCodeAt(i)) this.fail("expected a value");
      this.at++;
    }
    if (write) this.out.append(this.data, this.at - text.length, this.at);
  }

  /** A number by RFC 8259's grammar, written as it stands. */
  private number(write: boolean): void {
    const start = this.at;
    if (this.peek() === 0x2d) this.at++;
    if (this.peek() === 0x30) this.at++;
    else if (this.digits() === 0) this.fail("expected a digit");
    if (this.peek() === 0x2e) {
      this.at++;
      if (this.digits() === 0) this.fail("expected a digit after '.'");
    }
    if (this.peek() === 0x65 || this.peek() === 0x45) {
      this.at++;
      if (this.peek() === 0x2b || this.peek() === 0x2d) this.at++;
      if (this.digits() === 0) this.fail("expected a digit in the exponent");
    }
    if (write) this.out.append(this.data, start, this.at);
  }

  private digits(): number {
    const start = this.at;
    while (this.at < this.end && this.data[this.at] >= 0x30 && this.data[this.at] <= 0x39) this.at++;
    return this.at - start;
  }

  /**
   * A string: checked, and with `write` written to `into` with its escapes resolved and written
   * back as JSON.stringify writes them (a member name is read into `into` resolved and unquoted
   * when `write` is false and `into` is the name buffer).
   */
  private string(into: Bytes, write: boolean): void {
    const bare = into === this.name;
    const emit = write || bare;
    if (write) into.push(QUOTE);
    this.at++; // "
    const { data } = this;
    for (;;) {
      let run = this.at;
      while (run < this.end) {
        const byte = data[run];
        if (byte === QUOTE || byte === BACKSLASH || byte < 0x20) break;
        run++;
      }
      if (emit) into.append(data, this.at, run);
      this.at = run;
      if (run >= this.end) this.fail("a string the line does not close");
      const byte = data[run];
      if (byte === QUOTE) {
        this.at++;
        if (write) into.push(QUOTE);
        return;
      }
      if (byte < 0x20) this.fail("a control character inside a string");
      this.escape(into, emit, bare);
    }
  }

  /** One escape at `at` (a backslash), resolved into `into`. */
  private escape(into: Bytes, emit: boolean, bare: boolean): void {
    this.at++;
    const code = this.peek();
    this.at++;
    let unit: number;
    switch (code) {
      case 0x22:
        unit = 0x22;
        break;
      case 0x5c:
        unit = 0x5c;
        break;
      case 0x2f:
        unit = 0x2f;
        break;
      case 0x62:
        unit = 0x08;
        break;
      case 0x66:
        unit = 0x0c;
        break;
      case 0x6e:
        unit = 0x0a;
        break;
      case 0x72:
        unit = 0x0d;
        break;
      case 0x74:
        unit = 0x09;
        break;
      case 0x75:
        unit = this.hex4();
        break;
      default:
        this.at--;
        this.fail("an unknown escape");
    }
    if (
      unit >= 0xd800 &&
      unit <= 0xdbff &&
      this.peek() === BACKSLASH &&
      this.at + 1 < this.end &&
      this.data[this.at + 1] === 0x75
    ) {
      const save = this.at;
      this.at += 2;
      const low = this.hex4();
      if (low >= 0xdc00 && low <= 0xdfff) unit = 0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00);
      else this.at = save;
    }
    if (!emit) return;
    this.codePoint(into, unit, bare);
  }

  private hex4(): number {
    let unit = 0;
    for (let i = 0; i < 4; i++) {
      const byte = this.peek();
      const digit =
        byte >= 0x30 && byte <= 0x39
          ? byte - 0x30
          : byte >= 0x61 && byte <= 0x66
            ? byte - 0x57
            : byte >= 0x41 && byte <= 0x46
              ? byte - 0x37
              : -1;
      if (digit === -1) this.fail("expected four hex digits after \\u");
      unit = unit * 16 + digit;
      this.at++;
    }
    return unit;
  }

  /** A resolved code point (or lone surrogate) as UTF-8, escaped as JSON.stringify escapes it unless `bare`. */
  private codePoint(into: Bytes, cp: number, bare: boolean): void {
    if (!bare && (cp < 0x20 || cp === QUOTE || cp === BACKSLASH)) {
      const short = SHORT_ESCAPE[cp];
      into.push(BACKSLASH);
      if (short !== undefined) into.push(short);
      else this.hexEscape(into, cp);
      return;
    }
    if (cp < 0x80) into.push(cp);
    else if (cp < 0x800) {
      into.push(0xc0 | (cp >> 6));
      into.push(0x80 | (cp & 63));
    } else if (cp >= 0xd800 && cp <= 0xdfff) {
      // A lone surrogate: JSON.stringify's \udxxx, so it stays apart from every real character.
      into.push(BACKSLASH);
      this.hexEscape(into, cp);
    } else if (cp < 0x10000) {
      into.push(0xe0 | (cp >> 12));
      into.push(0x80 | ((cp >> 6) & 63));
      into.push(0x80 | (cp & 63));
    } else {
      into.push(0xf0 | (cp >> 18));
      into.push(0x80 | ((cp >> 12) & 63));
      into.push(0x80 | ((cp >> 6) & 63));
      into.push(0x80 | (cp & 63));
    }
  }

  /** "u" and four lowercase hex digits (the backslash is written by the caller). */
  private hexEscape(into: Bytes, unit: number): void {
    into.push(0x75);
    for (let shift = 12; shift >= 0; shift -= 4) into.push(HEX.charCodeAt((unit >> shift) & 15));
  }
}
