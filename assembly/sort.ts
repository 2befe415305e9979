// In-place sorting of numbers in linear memory (no allocation): for bottom-k sketches, for
// distinct-shingle SimHash and for the near-duplicate index's buckets.

/** Sorts `n` values of type T (u32 or u64) at `at` ascending: quicksort (median of three, the smaller side recursed), insertion sort below 17. */
export function sortValues<T>(at: usize, n: usize): void {
  while (n > 16) {
    const a = load<T>(at);
    const b = load<T>(at + ((n >> 1) * sizeof<T>()));
    const c = load<T>(at + ((n - 1) * sizeof<T>()));
    const pivot = a < b ? (b < c ? b : a < c ? c : a) : (a < c ? a : b < c ? c : b);
    let i: usize = 0;
    let j: usize = n - 1;
    while (true) {
      while (load<T>(at + (i * sizeof<T>())) < pivot) i++;
      while (load<T>(at + (j * sizeof<T>())) > pivot) j--;
      if (i >= j) break;
      const t = load<T>(at + (i * sizeof<T>()));
      store<T>(at + (i * sizeof<T>()), load<T>(at + (j * sizeof<T>())));
      store<T>(at + (j * sizeof<T>()), t);
      i++;
      j--;
    }
    // [0, j] <= pivot <= [j + 1, n)
    const left = j + 1;
    if (left < n - left) {
      sortValues<T>(at, left);
      at += left * sizeof<T>();
      n -= left;
    } else {
      sortValues<T>(at + (left * sizeof<T>()), n - left);
      n = left;
    }
  }
  for (let i: usize = 1; i < n; i++) {
    const v = load<T>(at + (i * sizeof<T>()));
    let j = i;
    while (j > 0 && load<T>(at + ((j - 1) * sizeof<T>())) > v) {
      store<T>(at + (j * sizeof<T>()), load<T>(at + ((j - 1) * sizeof<T>())));
      j--;
    }
    store<T>(at + (j * sizeof<T>()), v);
  }
}


// (key, tag) pairs compare as one number: key first, then tag.
// @ts-ignore: decorator
@inline function pairBefore(k1: u64, t1: u32, k2: u64, t2: u32): bool {
  return k1 < k2 || (k1 == k2 && t1 < t2);
}

// @ts-ignore: decorator
@inline function swapPairs(keys: usize, tags: usize, i: usize, j: usize): void {
  const k = load<u64>(keys + (i << 3));
  store<u64>(keys + (i << 3), load<u64>(keys + (j << 3)));
  store<u64>(keys + (j << 3), k);
  const t = load<u32>(tags + (i << 2));
  store<u32>(tags + (i << 2), load<u32>(tags + (j << 2)));
  store<u32>(tags + (j << 2), t);
}

/**
 * Sorts `n` u64 keys at `keys` with their u32 tags at `tags` by (key, tag) ascending: with
 * distinct tags (input positions) the order is total, so equal keys keep their tags' order, as a
 * stable sort would. Quicksort (median of three, the smaller side recursed), insertion sort below 17.
 */
export function sortKeyed(keys: usize, tags: usize, n: usize): void {
  while (n > 16) {
    // The median of first, middle and last moved to the middle, its value the pivot.
    const mid = n >> 1;
    if (pairBefore(load<u64>(keys + (mid << 3)), load<u32>(tags + (mid << 2)), load<u64>(keys), load<u32>(tags))) swapPairs(keys, tags, 0, mid);
    if (pairBefore(load<u64>(keys + ((n - 1) << 3)), load<u32>(tags + ((n - 1) << 2)), load<u64>(keys), load<u32>(tags))) swapPairs(keys, tags, 0, n - 1);
    if (pairBefore(load<u64>(keys + ((n - 1) << 3)), load<u32>(tags + ((n - 1) << 2)), load<u64>(keys + (mid << 3)), load<u32>(tags + (mid << 2)))) swapPairs(keys, tags, mid, n - 1);
    const pk = load<u64>(keys + (mid << 3));
    const pt = load<u32>(tags + (mid << 2));
    let i: usize = 0;
    let j: usize = n - 1;
    while (true) {
      while (pairBefore(load<u64>(keys + (i << 3)), load<u32>(tags + (i << 2)), pk, pt)) i++;
      while (pairBefore(pk, pt, load<u64>(keys + (j << 3)), load<u32>(tags + (j << 2)))) j--;
      if (i >= j) break;
      swapPairs(keys, tags, i, j);
      i++;
      j--;
    }
    // [0, j] <= pivot <= [j + 1, n)
    const left = j + 1;
    if (left < n - left) {
      sortKeyed(keys, tags, left);
      keys += left << 3;
      tags += left << 2;
      n -= left;
    } else {
      sortKeyed(keys + (left << 3), tags + (left << 2), n - left);
      n = left;
    }
  }
  for (let i: usize = 1; i < n; i++) {
    const k = load<u64>(keys + (i << 3));
    const t = load<u32>(tags + (i << 2));
    let j = i;
    while (j > 0 && pairBefore(k, t, load<u64>(keys + ((j - 1) << 3)), load<u32>(tags + ((j - 1) << 2)))) {
      store<u64>(keys + (j << 3), load<u64>(keys + ((j - 1) << 3)));
      store<u32>(tags + (j << 2), load<u32>(tags + ((j - 1) << 2)));
      j--;
    }
    store<u64>(keys + (j << 3), k);
    store<u32>(tags + (j << 2), t);
  }
}
