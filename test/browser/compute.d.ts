// Types of compute.js for the TypeScript tests.
export declare function compute(
  cs: unknown,
  f: unknown,
): {
  canonical: string[];
  fingerprints: string[][];
  md5s: string[];
  bloom: number[];
  blocked: number[];
  answers: number[];
  counting: number[];
  multiplicity: number[];
  window: number[];
  simhash: string[];
  index: number[];
  near: string;
  loaded: { counting: number[]; window: number[]; index: string } | undefined;
};
