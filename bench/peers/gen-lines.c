/* Writes N distinct lines to stdout, in no sorted order: line i is the 64-bit splitmix64 finalizer
   of i (a bijection, so every line is distinct) as 16 hex digits. Used by bench/cli-scale.js to pipe
   up to a billion distinct lines into each tool without storing them (C: a Node generator would
   be slower than the tools it feeds). usage: gen-lines N */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  uint64_t n = strtoull(argv[1], NULL, 10);
  static char buf[1 << 20];
  static const char hex[] = "0123456789abcdef";
  size_t at = 0;
  for (uint64_t i = 0; i < n; i++) {
    uint64_t z = i + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    for (int d = 15; d >= 0; d--) buf[at + (size_t)(15 - d)] = hex[(z >> (4 * d)) & 15];
    buf[at + 16] = '\n';
    at += 17;
    if (at + 17 > sizeof buf) {
      if (fwrite(buf, 1, at, stdout) != at) return 1;
      at = 0;
    }
  }
  if (fwrite(buf, 1, at, stdout) != at) return 1;
  return 0;
}
