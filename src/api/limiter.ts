/**
 * Client-wide request pacing: a concurrency gate (requests in flight) and a rate ceiling
 * (request starts per second, retries included). Small on purpose; both take a Clock so the
 * tests can drive time without sleeping.
 */

export interface Clock {
  now(): number;
  /** Resolves after `ms`; rejects with `signal.reason` as soon as the signal aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const realClock: Clock = {
  now: () => performance.now(),
  sleep: abortableSleep,
};

export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(
      () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      },
      Math.max(0, ms),
    );
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** What the transport tells a pacer about each response: its status and headers. */
export interface RateFeedback {
  status: number;
  headers: Record<string, string | string[] | undefined>;
}

/** Paces request starts; an adaptive pacer also learns from every response. */
export interface Pacer {
  /** The rate request starts are paced at now (requests per second), where the pacer has one. */
  readonly rate?: number;
  acquire(signal?: AbortSignal): Promise<void>;
  observe?(feedback: RateFeedback): void;
}

/**
 * Request starts handed out one at a time in FIFO order, each no earlier than `earliest(lastStart)`
 * says, where lastStart is the previous ACTUAL start. Asked again at every step, so a pacer whose
 * rate or pause changes (a 429 arrives) holds the callers already waiting too. Slots reserved
 * ahead of time would instead, after an event-loop stall, all fall due at once and bunch together
 * at the upstream.
 */
export class StartQueue implements Pacer {
  private lastStart = Number.NEGATIVE_INFINITY;
  private readonly waiters: Array<{ resolve: () => void }> = [];
  private pumping = false;

  /**
   * @param earliest the earliest start allowed after one at `lastStart` (clock ms).
   * @param onWait called when a caller has to wait (the pacer was the bottleneck).
   */
  constructor(
    private readonly earliest: (lastStart: number) => number,
    private readonly clock: Clock = realClock,
    private readonly onWait?: (now: number) => void,
    /**
     * A start due within a millisecond goes now and counts as made at its due time. For a fixed
     * ceiling above ~1,000/s: a timer cannot wait less than a millisecond, so sleeping paced the
     * "unthrottled" 100,000/s at about one start per timer tick. Default false.
     */
    private readonly subMillisecond = false,
  ) {}

  /** Waits for this caller's turn; an aborted waiter leaves the queue at once. */
  async acquire(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    const now = this.clock.now();
    if (this.waiters.length === 0 && now >= this.earliest(this.lastStart)) {
      this.lastStart = now;
      return;
    }
    this.onWait?.(now);
    await waitInQueue(this.waiters, signal, () => void this.pump());
  }

  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (this.waiters.length > 0) {
        // Timers may fire a little early against performance.now() (the event loop caches its
        // time), so the wait is checked again after every sleep.
        const due = this.earliest(this.lastStart);
        const now = this.clock.now();
        const wait = due - now;
        if (wait >= 1 || (wait > 0 && !this.subMillisecond)) {
          await this.clock.sleep(Math.ceil(wait));
          continue;
        }
        this.lastStart = wait > 0 ? due : now;
        this.waiters.shift()!.resolve();
      }
    } finally {
      this.pumping = false;
    }
  }
}

/**
 * A fixed ceiling. Spaced scheduling rather than a bursty token bucket: request starts are at
 * least 1000/maxPerSecond ms apart, so no one-second window ever holds more than the ceiling,
 * however the calls are spread across callers.
 */
export class RateLimiter extends StartQueue {
  readonly rate: number;

  constructor(maxPerSecond: number, clock: Clock = realClock) {
    if (!(maxPerSecond > 0) || !Number.isFinite(maxPerSecond)) {
      throw new RangeError(`maxRequestsPerSecond must be a positive number, got ${maxPerSecond}`);
    }
    const intervalMs = 1000 / maxPerSecond;
    super((lastStart) => lastStart + intervalMs, clock, undefined, intervalMs < 1);
    this.rate = maxPerSecond;
  }
}

/** Counting semaphore with a FIFO queue; waiters leave the queue when their signal aborts. */
export class Semaphore {
  private active = 0;
  private readonly waiters: Array<{ resolve: () => void }> = [];

  constructor(private readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`concurrency must be a positive integer, got ${limit}`);
  }

  get inFlight(): number {
    return this.active;
  }

  /** Resolves with a release function once a slot is held; call it exactly once. */
  async acquire(signal?: AbortSignal): Promise<() => void> {
    signal?.throwIfAborted();
    if (this.active < this.limit) {
      this.active++;
      return this.releaser();
    }
    await waitInQueue(this.waiters, signal);
    // The releasing caller handed its slot straight to us (active was not decremented).
    return this.releaser();
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiters.shift();
      if (next) next.resolve();
      else this.active--;
    };
  }
}

/**
 * Joins `queue` and resolves when the queue's owner calls the entry's resolve(); leaves the queue
 * and rejects with the abort reason as soon as `signal` aborts. `onQueued` runs once it has joined.
 */
function waitInQueue(queue: Array<{ resolve: () => void }>, signal: AbortSignal | undefined, onQueued?: () => void): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const waiter = {
      resolve: () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      },
    };
    const onAbort = () => {
      const i = queue.indexOf(waiter);
      if (i >= 0) queue.splice(i, 1);
      reject(signal?.reason);
    };
    queue.push(waiter);
    signal?.addEventListener('abort', onAbort, { once: true });
    onQueued?.();
  });
}
