// Types of crawl-site.js (plain JavaScript so benchmarks and any crawler's tests can start it).

/** Options of startSite. */
export interface SiteOptions {
  /** Content pages /p/0 .. /p/N-1 (default 100). */
  readonly pages?: number;
  /** Link occurrences in the navigation block every HTML page repeats (default 1250). */
  readonly navLinks?: number;
  /** Delay before each answer, in ms (default 0). */
  readonly delayMs?: number;
  /** false: no /old/i redirects (default true). */
  readonly redirects?: boolean;
  /** false: no /fail/i pages (default true). */
  readonly failing?: boolean;
  /** Called when a request arrives: its entry ("GET /p/1", "POST /submit q=1") and its count so far. */
  readonly onRequest?: (entry: string, count: number) => void;
}

/** A running site. */
export interface CrawlSite {
  /** "http://localhost:PORT". */
  readonly origin: string;
  readonly port: number;
  readonly pages: number;
  readonly navLinks: number;
  /** i of the pages /old/i that redirect (301) to /p/i. */
  readonly redirects: readonly number[];
  /** i of the pages /fail/i that always answer 500. */
  readonly failing: readonly number[];
  /** i of the pages /t/i: the article of /p/i in another template, one word changed. */
  readonly templates: readonly number[];
  /** i of the pages /q/i?a=1&b=2 (also linked as ?b=2&a=1). */
  readonly queryPages: readonly number[];
  /** i of the pages also linked as /p/i?gclid=gi and /p/i?a=2&a=1 (distinct URLs to Crawlee). */
  readonly extras: readonly number[];
  /** Requests by "METHOD /path?query" (POSTs: " body" appended). */
  readonly hits: Map<string, number>;
  /** The same entries in arrival order. */
  readonly log: string[];
  /** The navigation block's link targets, each spelling once. */
  slots(): string[];
  /** Forgets the counts. */
  reset(): void;
  close(): Promise<void>;
}

/** Starts the site on a free loopback port. */
export function startSite(options?: SiteOptions): Promise<CrawlSite>;

/** The article text of page i (400 words, deterministic). */
export function articleText(i: number): string;
