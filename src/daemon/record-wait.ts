import type { RecordType } from '../entities/index.js';
import type { RecordState } from '../store/index.js';
import { MAX_WAITERS } from './wait-bounds.js';

/** How a record wait ended: the mirror's copy is the write or later, or the record is gone or quarantined. */
export type RecordVerdict = 'current' | 'deleted' | 'quarantined';

export interface RecordWaitOutcome {
  /** Null: timed out, or the caller went away, or the daemon stopped. */
  verdict: RecordVerdict | null;
  /** The record's committed state the verdict rests on (null when it could not be read). */
  state: RecordState | null;
}

/**
 * Whether a committed state answers a wait for a write stamped `updatedAt` (ms) that began at
 * `since` (ms, this process's clock). A copy at or after the write is current; a deleted record
 * will not change again; a quarantined copy answers when it is the write or later by its own
 * `updatedAt`, or, when it carries none readable, when it was read after the wait began (an older
 * quarantine row says nothing about the write, whose re-read replaces or clears it).
 */
export function recordVerdict(state: RecordState, updatedAt: number, since: number): RecordVerdict | null {
  if (state.updatedAt !== null && Date.parse(state.updatedAt) >= updatedAt) return 'current';
  if (state.deletedAt !== null) return 'deleted';
  const q = state.quarantined;
  if (q && (q.updatedAt !== null ? Date.parse(q.updatedAt) >= updatedAt : Date.parse(q.lastSeenAt) >= since)) return 'quarantined';
  return null;
}

/**
 * How far ahead of this process's clock a write's `updatedAt` may be and still nudge the poll: the
 * upstream's clock may run ahead (docs/sync.md, "Hostile upstream"); an instant beyond is no write yet.
 */
const NUDGE_AHEAD_MS = 60_000;

interface RecordWaiter {
  updatedAt: number;
  since: number;
  /** The first read found the write missing, and the poll was nudged (once per waiter). */
  nudged: boolean;
  settle(outcome: RecordWaitOutcome): void;
}

type ReadState = (entityType: RecordType, id: string) => Promise<RecordState>;

/**
 * Callers of `GET /wait?entity=&id=&updatedAt=` (docs/operations.md): each waits until the
 * mirror's committed copy of one record holds a write. The commit that writes a record wakes its
 * waiters ({@link committed}), which then read that one record's state; a recorded as-of wakes all
 * of them ({@link recheckAll}) as a backstop for records written in bulk (a backfill's pages).
 * Nothing polls. Bounded: at most {@link MAX_WAITERS} at once.
 */
export class RecordWaiters {
  #read: ReadState | null = null;
  readonly #waiting = new Map<string, Set<RecordWaiter>>();
  #size = 0;
  /**
   * Called once per wait whose first read finds the mirror without the write (a plausible one, not
   * far ahead of this clock): the continuous loop then reads the change log without waiting out its
   * idle pause (src/daemon/continuous.ts, PollNudge).
   */
  onPending: (() => void) | null = null;
  /** Keys whose state is being read, and whether a commit arrived meanwhile (read once more). */
  readonly #reading = new Map<string, boolean>();

  constructor(
    readonly maxWaiters = MAX_WAITERS,
    private readonly onError: (err: unknown) => void = () => {},
  ) {}

  get size(): number {
    return this.#size;
  }

  /** The mirror is open (this process holds the writer lock): waits may read it. */
  attach(read: ReadState): void {
    this.#read = read;
  }

  /** One record's current state, or null when no mirror is attached or the read failed. */
  async state(entityType: RecordType, id: string): Promise<RecordState | null> {
    if (!this.#read) return null;
    try {
      return await this.#read(entityType, id);
    } catch (err) {
      this.onError(err);
      return null;
    }
  }

  /**
   * Resolves once the record's committed state answers the wait (checked at once, then on each of
   * its commits), or with `verdict: null` and its state when `timeoutMs` passes or `signal`
   * aborts; null when the bound is full (nothing was registered).
   */
  wait(entityType: RecordType, id: string, updatedAt: number, timeoutMs: number, signal?: AbortSignal): Promise<RecordWaitOutcome> | null {
    if (this.#size >= this.maxWaiters) return null;
    const key = `${entityType}:${id}`;
    return new Promise<RecordWaitOutcome>((resolve) => {
      let settled = false;
      const done = (outcome: RecordWaitOutcome) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        const set = this.#waiting.get(key);
        if (set?.delete(waiter)) this.#size--;
        if (set?.size === 0) this.#waiting.delete(key);
        resolve(outcome);
      };
      const waiter: RecordWaiter = { updatedAt, since: Date.now(), nudged: false, settle: done };
      const onAbort = () => void this.state(entityType, id).then((state) => done({ verdict: null, state }));
      // Unref'd: a waiter never keeps a stopping daemon alive.
      const timer = setTimeout(onAbort, timeoutMs);
      timer.unref();
      signal?.addEventListener('abort', onAbort, { once: true });
      // Registered before the first read: a commit landing during that read triggers another.
      const set = this.#waiting.get(key) ?? new Set<RecordWaiter>();
      set.add(waiter);
      this.#waiting.set(key, set);
      this.#size++;
      this.committed(entityType, id);
    });
  }

  /** A commit wrote this record (or its quarantine row): its waiters read its state again. */
  committed(entityType: RecordType, id: string): void {
    const key = `${entityType}:${id}`;
    if (!this.#waiting.has(key)) return;
    if (this.#reading.has(key)) {
      this.#reading.set(key, true);
      return;
    }
    this.#reading.set(key, false);
    void this.#check(entityType, id, key);
  }

  /** Every waiter reads its record again (a recorded as-of: whatever was written in bulk is committed). */
  recheckAll(): void {
    for (const key of [...this.#waiting.keys()]) {
      const at = key.indexOf(':');
      this.committed(key.slice(0, at) as RecordType, key.slice(at + 1));
    }
  }

  /** The daemon stops: every waiter answers now with what it has. */
  close(): void {
    for (const set of [...this.#waiting.values()]) for (const w of [...set]) w.settle({ verdict: null, state: null });
  }

  #nudge(w: RecordWaiter): void {
    w.nudged = true;
    if (w.updatedAt <= Date.now() + NUDGE_AHEAD_MS) this.onPending?.();
  }

  async #check(entityType: RecordType, id: string, key: string): Promise<void> {
    for (;;) {
      const state = await this.state(entityType, id);
      if (state)
        for (const w of [...(this.#waiting.get(key) ?? [])]) {
          const verdict = recordVerdict(state, w.updatedAt, w.since);
          if (verdict) w.settle({ verdict, state });
          else if (!w.nudged) this.#nudge(w);
        }
      if (this.#reading.get(key) !== true || !this.#waiting.has(key)) break;
      this.#reading.set(key, false);
    }
    this.#reading.delete(key);
  }
}
