// In-place sorting of numbers in linear memory (no allocation): for bottom-k sketches and
// for distinct-shingle SimHash.

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

