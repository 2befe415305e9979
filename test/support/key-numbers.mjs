// The keys of test/support/budget-fill-child.mjs by number, shared with the tests that replay them
// in a JavaScript Set: key i is number i (distinct 0), or a seeded mix of i in [0, distinct).

/** The i-th key's number. */
export function keyNumber(i, distinct) {
  if (distinct === 0) return i;
  let x = Math.imul(i ^ 0x5bd1e995, 0x9e3779b1);
  x ^= x >>> 15;
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  return (x >>> 0) % distinct;
}

/** The key of number v: one key a number, one number a key. */
export const keyOf = (v) => `https://s${v % 40}.example/p/${v}`;
