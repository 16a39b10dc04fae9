import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Role } from './health.js';

/** Waiters held at once; one more is refused with 429 (each holds a socket and a timer, nothing else). */
export const MAX_WAITERS = 1000;
/** `timeoutMs` when the request names none. */
export const DEFAULT_WAIT_TIMEOUT_MS = 30_000;
/** The longest `timeoutMs` allowed: past it a client should ask again, not hold a socket. */
export const MAX_WAIT_TIMEOUT_MS = 300_000;

export type WaitOutcome = { current: true; asOf: string } | { current: false; asOf: string | null };

interface Waiter {
  until: number;
  settle(outcome: WaitOutcome): void;
}

/**
 * Read-after-write (docs/operations.md, "Waiting for a write: `GET /wait`"): callers wait until the
 * mirror is current as of an instant. The commit that records a new as-of wakes them
 * ({@link advance}); nothing polls. Bounded: at most {@link MAX_WAITERS} at once.
 */
export class AsOfWaiters {
  #asOf: string | null = null;
  readonly #waiting = new Set<Waiter>();

  constructor(readonly maxWaiters = MAX_WAITERS) {}

  get asOf(): string | null {
    return this.#asOf;
  }

  get size(): number {
    return this.#waiting.size;
  }

  /** A new as-of committed (or was read at start): wakes every waiter it satisfies. */
  advance(asOf: string | null): void {
    this.#asOf = asOf;
    if (asOf === null) return;
    const at = Date.parse(asOf);
    for (const w of [...this.#waiting]) if (w.until <= at) w.settle({ current: true, asOf });
  }

  /**
   * Resolves when the as-of reaches `until` (at once if it has), or with `current: false` when
   * `timeoutMs` passes or `signal` aborts; null when the bound is full (nothing was registered).
   */
  wait(until: number, timeoutMs: number, signal?: AbortSignal): Promise<WaitOutcome> | null {
    const now = this.#asOf;
    if (now !== null && Date.parse(now) >= until) return Promise.resolve({ current: true, asOf: now });
    if (this.#waiting.size >= this.maxWaiters) return null;
    return new Promise<WaitOutcome>((resolve) => {
      const done = (outcome: WaitOutcome) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.#waiting.delete(waiter);
        resolve(outcome);
      };
      const waiter: Waiter = { until, settle: done };
      const onAbort = () => done({ current: false, asOf: this.#asOf });
      // Unref'd: a waiter never keeps a stopping daemon alive.
      const timer = setTimeout(onAbort, timeoutMs);
      timer.unref();
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiting.add(waiter);
    });
  }

  /** The daemon stops: every waiter answers now with what it has. */
  close(): void {
    for (const w of [...this.#waiting]) w.settle({ current: false, asOf: this.#asOf });
  }
}

type Answer = (status: number, body: unknown, headers?: Record<string, string>) => void;

/**
 * `GET /wait?until=<ISO instant>&timeoutMs=<n>`: 200 once the mirror is current as of `until`, 504
 * when `timeoutMs` passes first (both with `currentAsOf`), 400 for a bad parameter, 503 on a
 * standby or a stopping daemon, 429 when {@link MAX_WAITERS} already wait.
 */
export async function answerWait(
  req: IncomingMessage,
  res: ServerResponse,
  waiters: AsOfWaiters,
  role: () => Role,
  answer: Answer,
): Promise<void> {
  const query = new URL(req.url ?? '/', 'http://wsmirror').searchParams;
  const parsed = parseWait(query);
  if ('error' in parsed) return answer(400, { error: parsed.error });
  const r = role();
  if (r !== 'writer')
    return answer(503, {
      error: r === 'standby' ? 'standby: this process does not write the mirror; ask the writer' : 'stopping: ask the next writer',
      currentAsOf: waiters.asOf,
    });
  const closed = new AbortController();
  // The client going away ends its wait: its slot is free at once.
  res.once('close', () => closed.abort());
  const started = Date.now();
  const pending = waiters.wait(parsed.until, parsed.timeoutMs, closed.signal);
  if (pending === null)
    return answer(
      429,
      { error: `${waiters.maxWaiters} requests are already waiting; retry shortly`, currentAsOf: waiters.asOf },
      { 'retry-after': '1' },
    );
  const outcome = await pending;
  if (closed.signal.aborted && !outcome.current && res.destroyed) return;
  const body = { until: new Date(parsed.until).toISOString(), currentAsOf: outcome.asOf, waitedMs: Date.now() - started };
  if (outcome.current) return answer(200, { status: 'current', ...body });
  answer(504, { status: 'timeout', ...body, error: `the mirror was not current as of until within ${parsed.timeoutMs} ms` });
}

/** The query of /wait, or the sentence that says what is wrong with it. */
export function parseWait(query: URLSearchParams): { until: number; timeoutMs: number } | { error: string } {
  // An unencoded `+` of a zone offset arrives as a space.
  const untilText = query.get('until')?.replace(' ', '+') ?? null;
  if (untilText === null || untilText === '')
    return { error: 'until is required: an ISO 8601 instant with a zone, e.g. until=2026-03-01T12:00:00.000Z' };
  const until = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)$/i.test(untilText) ? Date.parse(untilText) : Number.NaN;
  if (!Number.isFinite(until))
    return {
      error: `until ${JSON.stringify(untilText.slice(0, 60))} is not an ISO 8601 instant with a zone, e.g. 2026-03-01T12:00:00.000Z`,
    };
  const timeoutText = query.get('timeoutMs');
  const timeoutMs = timeoutText === null ? DEFAULT_WAIT_TIMEOUT_MS : /^\d{1,9}$/.test(timeoutText) ? Number(timeoutText) : Number.NaN;
  if (!(timeoutMs >= 0 && timeoutMs <= MAX_WAIT_TIMEOUT_MS))
    return {
      error: `timeoutMs must be a whole number of milliseconds from 0 to ${MAX_WAIT_TIMEOUT_MS} (default ${DEFAULT_WAIT_TIMEOUT_MS})`,
    };
  return { until, timeoutMs };
}
