import v8 from 'node:v8';
import vm from 'node:vm';

/** Heap in use above which a bulk writer asks V8 for a full collection (docs/operations.md, "Memory"). */
export const HEAP_BUDGET_BYTES = 48 * 1024 * 1024;
/** At most one look (and request) per this long: a full collection of the ~20 MB live heap costs ~8 ms. */
export const HEAP_CHECK_INTERVAL_MS = 100;

type Collect = () => void;

export interface HeapBudgetOptions {
  /** Default {@link HEAP_BUDGET_BYTES}. */
  budgetBytes?: number;
  /** Default {@link HEAP_CHECK_INTERVAL_MS}. */
  intervalMs?: number;
  /** Bytes of heap in use; default V8's `used_heap_size`. */
  heapUsed?: () => number;
  /** Starts a full collection; default V8's own, exposed at run time (null when it cannot be). */
  collect?: Collect | null;
  /** Milliseconds, monotonic; default `performance.now`. */
  now?: () => number;
}

export interface HeapBudget {
  /** Cheap enough to call per record: looks at the heap at most once per interval. True when it asked for a collection. */
  check(): boolean;
}

/**
 * Why this exists: a backfill or a large drain allocates fast (parsed pages, rows, statement
 * parameters), and what survives a scavenge while it waits for its batch to commit dies in V8's
 * old space. V8 lets old space grow to a limit it sizes from the machine's memory before it runs
 * a full collection, so the process's peak memory followed the workspace's size: at 50,000
 * tickets ~22 MB of the heap was live but ~100 MB committed, peak RSS 235-243 MB (docs/operations.md,
 * "Memory"). Asking for a full collection once the heap passes a fixed budget bounds that garbage
 * whatever the workspace's size. The collection is incremental (`execution: 'async'`), so the
 * writer is not stopped for it. Where V8's collector cannot be reached, this does nothing.
 */
export function createHeapBudget(options: HeapBudgetOptions = {}): HeapBudget {
  const budget = options.budgetBytes ?? HEAP_BUDGET_BYTES;
  const interval = options.intervalMs ?? HEAP_CHECK_INTERVAL_MS;
  const heapUsed = options.heapUsed ?? (() => v8.getHeapStatistics().used_heap_size);
  const collect = options.collect === undefined ? v8Collector() : options.collect;
  const now = options.now ?? (() => performance.now());
  let lastCheck = Number.NEGATIVE_INFINITY;
  return {
    check() {
      if (collect === null) return false;
      const t = now();
      if (t - lastCheck < interval) return false;
      lastCheck = t;
      if (heapUsed() <= budget) return false;
      collect();
      return true;
    },
  };
}

let exposed: Collect | null | undefined;

/**
 * V8's `gc`, exposed at run time: `--expose-gc` set now only applies to contexts created after,
 * so a fresh context hands it over. Set once per process; null if the runtime refuses.
 */
function v8Collector(): Collect | null {
  if (exposed !== undefined) return exposed;
  try {
    const existing = (globalThis as { gc?: unknown }).gc;
    let gc: unknown = existing;
    if (typeof gc !== 'function') {
      v8.setFlagsFromString('--expose-gc');
      gc = vm.runInNewContext('gc');
    }
    const fn = gc as (options?: { type: 'major'; execution: 'async' }) => void;
    exposed = typeof gc === 'function' ? () => fn({ type: 'major', execution: 'async' }) : null;
  } catch {
    exposed = null;
  }
  return exposed;
}
