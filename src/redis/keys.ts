// Key names. Every key of one structure carries the structure's name as a hash tag ({name}), so
// a Redis Cluster puts them in one slot: multi-key scripts stay legal and one structure lives
// on one node. keySlot() computes the slot as Redis does (CRC16/XMODEM of the tag, mod 16384).
import { InvalidArgumentError } from "../errors.js";

/** The prefix of every key of structure `name`: "cs:{name}:". */
export function keyPrefix(name: string): string {
  if (typeof name !== "string" || name.length === 0 || name.length > 200 || /[{}\s]/.test(name)) {
    throw new InvalidArgumentError("name", name, "1 to 200 characters without braces or spaces");
  }
  return `cs:{${name}}:`;
}

/** The Redis Cluster slot of a key (CRC16 of its hash tag when it has one), 0..16383. */
export function keySlot(key: string): number {
  const open = key.indexOf("{");
  let part = key;
  if (open !== -1) {
    const close = key.indexOf("}", open + 1);
    if (close > open + 1) part = key.slice(open + 1, close);
  }
  let crc = 0;
  for (const byte of new TextEncoder().encode(part)) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % 16384;
}
