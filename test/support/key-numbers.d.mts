/** The i-th key's number (see key-numbers.mjs). */
export function keyNumber(i: number, distinct: number): number;
/** The key of number v. */
export function keyOf(v: number): string;
