import type { IncomingMessage, ServerResponse } from 'node:http';
import { isRecordType, RECORD_TYPES, type RecordType } from '../entities/index.js';
import type { Role } from './health.js';
import type { RecordWaiters } from './record-wait.js';

import { DEFAULT_WAIT_TIMEOUT_MS, MAX_WAITERS, MAX_WAIT_TIMEOUT_MS } from './wait-bounds.js';

export { DEFAULT_WAIT_TIMEOUT_MS, MAX_WAITERS, MAX_WAIT_TIMEOUT_MS };

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

/** The waits /wait answers: the mirror current as of an instant, or one record holding a write. */
export interface Waits {
  asOf: AsOfWaiters;
  /** Without it, a record wait answers 400 (the query names what is supported). */
  records?: RecordWaiters;
}

/**
 * `GET /wait`: with `until`, waits for the as-of ({@link answerAsOfWait}); with `entity`, `id`
 * and `updatedAt`, for one record (src/daemon/record-wait.ts). 400 for a bad parameter, 503 on a
 * standby or a stopping daemon, 429 when {@link MAX_WAITERS} already wait.
 */
export async function answerWait(req: IncomingMessage, res: ServerResponse, waits: Waits, role: () => Role, answer: Answer): Promise<void> {
  const query = new URL(req.url ?? '/', 'http://wsmirror').searchParams;
  const forRecord = query.has('entity') || query.has('id') || query.has('updatedAt');
  if (forRecord && query.has('until')) return answer(400, { error: 'give either until, or entity, id and updatedAt, not both' });
  const parsed = forRecord ? parseRecordWait(query) : parseWait(query);
  if ('error' in parsed) return answer(400, { error: parsed.error });
  const r = role();
  if (r !== 'writer')
    return answer(503, {
      error: r === 'standby' ? 'standby: this process does not write the mirror; ask the writer' : 'stopping: ask the next writer',
      currentAsOf: waits.asOf.asOf,
    });
  const closed = new AbortController();
  // The client going away ends its wait: its slot is free at once.
  res.once('close', () => closed.abort());
  const gone = () => closed.signal.aborted && res.destroyed;
  if ('until' in parsed) return answerAsOfWait(parsed, waits.asOf, closed.signal, gone, answer);
  if (!waits.records) return answer(400, { error: 'this server waits only for until=<instant>' });
  return answerRecordWait(parsed, waits.records, closed.signal, gone, answer);
}

const busy = (answer: Answer, max: number, extra: object) =>
  answer(429, { error: `${max} requests are already waiting; retry shortly`, ...extra }, { 'retry-after': '1' });

/** `until`: 200 once the mirror is current as of it, 504 when `timeoutMs` passes first (both with `currentAsOf`). */
async function answerAsOfWait(
  parsed: { until: number; timeoutMs: number },
  waiters: AsOfWaiters,
  signal: AbortSignal,
  gone: () => boolean,
  answer: Answer,
): Promise<void> {
  const started = Date.now();
  const pending = waiters.wait(parsed.until, parsed.timeoutMs, signal);
  if (pending === null) return busy(answer, waiters.maxWaiters, { currentAsOf: waiters.asOf });
  const outcome = await pending;
  if (!outcome.current && gone()) return;
  const body = { until: new Date(parsed.until).toISOString(), currentAsOf: outcome.asOf, waitedMs: Date.now() - started };
  if (outcome.current) return answer(200, { status: 'current', ...body });
  answer(504, { status: 'timeout', ...body, error: `the mirror was not current as of until within ${parsed.timeoutMs} ms` });
}

/**
 * `entity`, `id`, `updatedAt`: 200 once the mirror's committed copy of that record has an
 * `updatedAt` at or after the given one (`status: "current"`), or the record is deleted or
 * quarantined (`status` says which); 504 with the record's state when `timeoutMs` passes first.
 */
async function answerRecordWait(
  parsed: RecordWaitQuery,
  waiters: RecordWaiters,
  signal: AbortSignal,
  gone: () => boolean,
  answer: Answer,
): Promise<void> {
  const started = Date.now();
  const pending = waiters.wait(parsed.entity, parsed.id, parsed.updatedAt, parsed.timeoutMs, signal);
  if (pending === null) return busy(answer, waiters.maxWaiters, {});
  const outcome = await pending;
  if (outcome.verdict === null && gone()) return;
  const body = {
    entity: parsed.entity,
    id: parsed.id,
    updatedAt: new Date(parsed.updatedAt).toISOString(),
    record: outcome.state,
    waitedMs: Date.now() - started,
  };
  if (outcome.verdict !== null) return answer(200, { status: outcome.verdict, ...body });
  answer(504, {
    status: 'timeout',
    ...body,
    error: `the mirror's copy of ${parsed.entity} ${parsed.id} did not reach updatedAt within ${parsed.timeoutMs} ms`,
  });
}

/** The query of /wait, or the sentence that says what is wrong with it. */
export function parseWait(query: URLSearchParams): { until: number; timeoutMs: number } | { error: string } {
  const until = parseInstant(query, 'until');
  if (typeof until !== 'number') return until;
  const timeoutMs = parseTimeout(query);
  return typeof timeoutMs === 'number' ? { until, timeoutMs } : timeoutMs;
}

export interface RecordWaitQuery {
  entity: RecordType;
  id: string;
  updatedAt: number;
  timeoutMs: number;
}

/** The longest record id a wait accepts (ids are opaque upstream strings, never this long). */
const MAX_ID_LENGTH = 200;

/** The query of a record /wait, or the sentence that says what is wrong with it. */
export function parseRecordWait(query: URLSearchParams): RecordWaitQuery | { error: string } {
  const entity = query.get('entity') ?? '';
  if (!isRecordType(entity))
    return { error: `entity must be one of ${RECORD_TYPES.join(', ')} (got ${JSON.stringify(entity.slice(0, 40))})` };
  const id = query.get('id') ?? '';
  if (id === '' || id.length > MAX_ID_LENGTH)
    return { error: `id is required: the record's id as the workspace gives it (at most ${MAX_ID_LENGTH} characters)` };
  const updatedAt = parseInstant(query, 'updatedAt');
  if (typeof updatedAt !== 'number') return updatedAt;
  const timeoutMs = parseTimeout(query);
  return typeof timeoutMs === 'number' ? { entity, id, updatedAt, timeoutMs } : timeoutMs;
}

function parseInstant(query: URLSearchParams, name: string): number | { error: string } {
  // An unencoded `+` of a zone offset arrives as a space.
  const text = query.get(name)?.replace(' ', '+') ?? null;
  if (text === null || text === '')
    return { error: `${name} is required: an ISO 8601 instant with a zone, e.g. ${name}=2026-03-01T12:00:00.000Z` };
  const at = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)$/i.test(text) ? Date.parse(text) : Number.NaN;
  if (!Number.isFinite(at))
    return { error: `${name} ${JSON.stringify(text.slice(0, 60))} is not an ISO 8601 instant with a zone, e.g. 2026-03-01T12:00:00.000Z` };
  return at;
}

function parseTimeout(query: URLSearchParams): number | { error: string } {
  const text = query.get('timeoutMs');
  const timeoutMs = text === null ? DEFAULT_WAIT_TIMEOUT_MS : /^\d{1,9}$/.test(text) ? Number(text) : Number.NaN;
  if (!(timeoutMs >= 0 && timeoutMs <= MAX_WAIT_TIMEOUT_MS))
    return {
      error: `timeoutMs must be a whole number of milliseconds from 0 to ${MAX_WAIT_TIMEOUT_MS} (default ${DEFAULT_WAIT_TIMEOUT_MS})`,
    };
  return timeoutMs;
}
