import type { Job, PgBoss } from 'pg-boss';
import { HEARTBEAT_SECONDS, POLL_SECONDS, SLICE_QUEUE, sliceJob, type SliceJob } from './queue.js';

/** How long a finished slice's settle may wait for others to share its statements. */
export const SETTLE_FLUSH_MS = 15;
/** How long a free slot may wait for others to share its fetch while more slices are ready. */
export const FETCH_GATHER_MS = 5;

export interface DispatchOptions {
  /** Slices run at once in this worker. */
  concurrency: number;
  /** Runs one slice; resolves with its successor's delay (null: none), rejects when the fleet's own database failed. */
  run: (job: SliceJob) => Promise<{ delayMs: number } | null>;
  /** The worker is stopping: no new fetch; the slices in flight end, then their settles are written. */
  stop: AbortSignal;
  onError: (err: Error) => void;
}

interface Settle {
  job: Job<SliceJob>;
  next: { delayMs: number } | null;
}

/**
 * The worker's slots, fed from pg-boss's queue with its own primitives (fetch, insert, complete,
 * touch), so that a slice's three queue statements are shared with the slices around it
 * (docs/fleet.md, "Slices"). pg-boss's `work()` runs fetch, complete and
 * the successor's send once for every slice, one statement each, and those three were a tenth of
 * the machine's CPU an idle slice at 200 workspaces (bench/README.md, "Fleet, sixth pass").
 *
 * - A fetch asks for as many jobs as there are free slots. While the last one came back full (the
 *   queue has more ready) it waits for a quarter of the slots to be free, or FETCH_GATHER_MS after
 *   the first of them freed; after a short one it polls every POLL_SECONDS / concurrency, as often
 *   as `work()`'s slots polled together.
 * - A finished slice's successor and completion wait up to SETTLE_FLUSH_MS for others: one insert
 *   (ON CONFLICT DO NOTHING, so stately's one queued job a workspace holds) and then one complete,
 *   fenced to the attempt fetched, for all of them. The successor goes first, as `work()` sent it
 *   from inside the handler: a worker killed between the two leaves a job the heartbeat fails and
 *   reruns, never a workspace without a queued slice for longer than a supervision pass.
 * - Every fetched job not yet completed is touched every HEARTBEAT_SECONDS / 2, in one statement:
 *   pg-boss's monitor fails a job whose heartbeat stops (a worker killed), and another worker reruns it.
 */
export class SliceDispatcher {
  private readonly claimed = new Map<string, Job<SliceJob>>();
  private running = 0;
  private settles: Settle[] = [];
  private flushTimer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();
  private wake: (() => void) | null = null;
  private readonly batch: number;
  /** When the oldest slot free since the last fetch became free. */
  private freeSince: number | null = null;

  constructor(
    private readonly boss: PgBoss,
    private readonly o: DispatchOptions,
  ) {
    this.batch = Math.max(1, Math.floor(o.concurrency / 4));
  }

  /** Runs until the stop; resolves once every slice fetched has ended and been settled. */
  async run(): Promise<void> {
    const heartbeat = setInterval(() => void this.touch(), (HEARTBEAT_SECONDS / 2) * 1000);
    try {
      let full = false;
      while (!this.o.stop.aborted) {
        const free = this.o.concurrency - this.running;
        if (free === 0) {
          await this.sleep(null, true);
          continue;
        }
        // More are ready: gather a few free slots for one fetch, but never hold one long (a
        // backfill's slices last seconds, and a slot kept waiting for three more slowed it by a fifth).
        const gathered = performance.now() - (this.freeSince ?? performance.now());
        if (full && free < this.batch && gathered < FETCH_GATHER_MS) {
          await this.sleep(FETCH_GATHER_MS - gathered, true);
          continue;
        }
        this.freeSince = null;
        const jobs = await this.fetch(free);
        for (const job of jobs) this.start(job);
        full = jobs.length === free;
        // pg-boss's `concurrency` slots each polled every POLL_SECONDS: a job falling due waited
        // POLL_SECONDS / concurrency for a fetch on average, and it still does.
        if (!full) await this.sleep((POLL_SECONDS * 1000) / this.o.concurrency, false);
      }
      while (this.running > 0) await new Promise<void>((resolve) => (this.wake = resolve));
      await this.flush();
    } finally {
      clearInterval(heartbeat);
    }
  }

  private async fetch(n: number): Promise<Job<SliceJob>[]> {
    try {
      return await this.boss.fetch<SliceJob>(SLICE_QUEUE, { batchSize: n });
    } catch (err) {
      this.o.onError(err as Error);
      return [];
    }
  }

  private start(job: Job<SliceJob>): void {
    this.claimed.set(job.id, job);
    this.running++;
    this.o
      .run(job.data)
      .then(
        (next) => this.settle({ job, next }),
        (err: unknown) => this.fail(job, err),
      )
      .finally(() => {
        this.running--;
        this.freeSince ??= performance.now();
        const wake = this.wake;
        this.wake = null;
        wake?.();
      });
  }

  private settle(s: Settle): void {
    this.settles.push(s);
    if (this.settles.length >= this.batch) void this.flush();
    else this.flushTimer ??= setTimeout(() => void this.flush(), SETTLE_FLUSH_MS);
  }

  /** One insert of the successors, then one complete; serialised, so a settle is never written twice. */
  private flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      if (this.flushTimer) clearTimeout(this.flushTimer);
      this.flushTimer = null;
      const batch = this.settles;
      this.settles = [];
      if (batch.length === 0) return;
      try {
        const nexts = batch.filter((s) => s.next !== null);
        if (nexts.length > 0)
          await this.boss.insert(
            SLICE_QUEUE,
            nexts.map((s) => sliceJob(s.job.data.id, s.next!.delayMs)),
          );
        await this.boss.complete(
          SLICE_QUEUE,
          batch.map((s) => s.job),
        );
      } catch (err) {
        // The jobs stay active: their heartbeat stops and pg-boss reruns them (a slice is idempotent).
        this.o.onError(err as Error);
      } finally {
        for (const s of batch) this.claimed.delete(s.job.id);
      }
    });
    return this.flushing;
  }

  private async fail(job: Job<SliceJob>, err: unknown): Promise<void> {
    this.claimed.delete(job.id);
    await this.boss
      .fail(SLICE_QUEUE, job, { message: err instanceof Error ? err.message : String(err) })
      .catch((e: unknown) => this.o.onError(e as Error));
    this.o.onError(err as Error);
  }

  private async touch(): Promise<void> {
    const jobs = [...this.claimed.values()];
    if (jobs.length === 0) return;
    await this.boss.touch(SLICE_QUEUE, jobs).catch((err: unknown) => this.o.onError(err as Error));
  }

  /** Until `ms` pass (null: no bound), the stop, or with `onSlot` a slot frees. */
  private sleep(ms: number | null, onSlot: boolean): Promise<void> {
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | null = null;
      const done = () => {
        if (timer) clearTimeout(timer);
        if (this.wake === done) this.wake = null;
        this.o.stop.removeEventListener('abort', done);
        resolve();
      };
      this.o.stop.addEventListener('abort', done, { once: true });
      if (onSlot) this.wake = done;
      if (ms !== null) timer = setTimeout(done, ms);
      if (this.o.stop.aborted) done();
    });
  }
}
