import v8 from 'node:v8';

/**
 * How far past what its last full collection left alive V8 lets the heap grow before it collects
 * again, in percent, once a bulk writer has run (docs/operations.md, "Memory").
 */
export const HEAP_GROWING_PERCENT = 20;

export interface HeapGrowthOptions {
  /** Default {@link HEAP_GROWING_PERCENT}. */
  percent?: number;
  /** Sets V8 flags at run time; default `v8.setFlagsFromString`. */
  setFlags?: (flags: string) => void;
}

/**
 * Why this exists: a backfill or a large drain allocates fast (parsed pages, rows, statement
 * parameters), and what survives a scavenge while it waits for its batch to commit dies in V8's
 * old space. V8 lets old space grow to a limit it sizes from the machine's memory, so a
 * 50,000-ticket backfill with about 22 MB live grew the heap to about 100 MB and peaked at 235-243
 * MB of RSS. Setting V8's own heap growing factor bounds that garbage to a share of what is live,
 * and V8 keeps collecting it incrementally and concurrently as it always does.
 *
 * Forced collections (`gc()` once the heap passed a fixed budget) bounded it as well, but each one
 * cost about a quarter of a second of CPU: V8 compiled the same hot functions again after every
 * forced collection (5,900 optimizing compilations in an L PostgreSQL backfill against 1,300
 * without them), and 30-40 of them took a backfill's CPU from about 13 to 21 s
 * (bench/README.md, "Nineteenth pass").
 *
 * The flag is process-wide and stays set: a daemon runs a bulk writer every cycle anyway. Returns
 * false when the runtime refuses it (then V8 sizes the heap as it would have).
 */
export function boundHeapGrowth(options: HeapGrowthOptions = {}): boolean {
  const percent = options.percent ?? HEAP_GROWING_PERCENT;
  const setFlags = options.setFlags ?? ((flags: string) => v8.setFlagsFromString(flags));
  try {
    setFlags(`--heap-growing-percent=${percent}`);
    return true;
  } catch {
    return false;
  }
}
