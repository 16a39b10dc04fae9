import { Cron } from 'croner';
import { AuthRejectedError, type ApiClient } from '../../api/index.js';
import {
  CatchUpPolicy,
  DaemonTelemetry,
  MAX_CATCH_UP_CYCLES,
  maintainMirror,
  openStatusReader,
  startHealthServer,
  pollContinuously,
  PollNudge,
  StatusSource,
  type RecordWaiters,
  type ContinuousLoop,
  type DaemonMetrics,
  type HealthTracker,
} from '../../daemon/index.js';
import type { Logger } from '../../log/index.js';
import { StoreError, type Store } from '../../store/index.js';
import {
  readAsOf,
  readBackfill,
  readWatermark,
  recordRun,
  type RecordRunOptions,
  runBackfill,
  runVerify,
  serveWriterRequests,
  type CycleResult,
  type SyncContext,
} from '../../sync/index.js';
import { WsmirrorError } from '../../util/errors.js';
import { logBackfillSummary } from '../backfill-summary.js';
import {
  exitAtOnce,
  Lifecycle,
  loadResources,
  openClient,
  syncContext,
  type GlobalFlags,
  type Resources,
  openWriterSession,
} from '../../session/index.js';
import { FIRST_LIST, syncOnce, type CycleSummary } from '../../sync/index.js';
import type { SecretRedactor } from '../../util/redact.js';

/**
 * `wsmirror run`: wait for the writer lock (hot standby), migrate, backfill an empty mirror, then
 * one sync per schedule tick. A tick that finds work still running is skipped; the cycle that was
 * running is then followed at once, as is one that ends behind the upstream (bounded). The
 * first SIGTERM stops the schedule and lets the page in flight commit; a second one exits at once.
 */
export async function runDaemon(flags: GlobalFlags, redactor: SecretRedactor): Promise<void> {
  const res = loadResources(flags, redactor);
  const { config, logger } = res;
  const life = new Lifecycle();
  const telemetry = new DaemonTelemetry(config.schedule, config.stallTimeoutMs, { retryMaxDelayMs: config.retry.maxDelayMs });
  const { metrics, health } = telemetry;
  const fail: Failure = { error: null };
  try {
    life.handleSignals({
      graceMs: 10_000,
      onFirst: (signal) => {
        health.state.role = 'stopping';
        logger.info({ signal }, 'stopping: no new cycles; the page in flight commits first (send the signal again to stop at once)');
      },
      onForce: exitAtOnce,
    });
    if (config.http.port !== 0) {
      const status = new StatusSource({
        telemetry,
        config,
        openReader: () => openStatusReader(config, (close) => life.defer(close)),
        redactor: res.redactor,
      });
      const { host, port, authToken } = config.http;
      const wait = telemetry.waiters;
      const recordWait = telemetry.recordWaiters;
      const server = await startHealthServer({ host, port, authToken, metrics, health, logger, status, wait, recordWait });
      life.defer(() => server.close());
      life.defer(() => wait.close());
      life.defer(() => recordWait.close());
    }
    const client = openClient(res, life, (e) => telemetry.request(e));
    telemetry.leader(false);
    const store = await standByForLock(res, life, client, telemetry, fail);
    if (!store || life.stop.signal.aborted) return;
    logger.info({ schedule: config.schedule }, 'writer lock held; this process keeps the mirror');
    telemetry.asOfKnown(await readAsOf(store));
    const ctx = syncContext(res, store, client, life, telemetry.hooks());
    await scheduleCycles(res, life, ctx, metrics, health, fail, telemetry.recordWaiters);
    logger.info('stopped');
  } finally {
    await life.close();
  }
  if (fail.error) throw fail.error;
}

/** What stops the daemon with an error (the lock lost, the key rejected); thrown once it has stopped. */
interface Failure {
  error: Error | null;
}

/**
 * The writer session of the daemon: waits as a hot standby until the lock is free; null when
 * stopped while waiting (a clean exit for `docker stop`). A lost lock stops the daemon at once.
 */
async function standByForLock(
  res: Resources,
  life: Lifecycle,
  client: ApiClient,
  telemetry: DaemonTelemetry,
  fail: Failure,
): Promise<Store | null> {
  try {
    const { store } = await openWriterSession(res, life, {
      client, // a rejected key stops at its probe, before anything is written
      lock: {
        wait: true,
        signal: life.stop.signal,
        onWaiting: () => res.logger.info('another process is writing this mirror; waiting as a hot standby'),
      },
      onLockHeld: (opened, lock) => {
        telemetry.attach(opened);
        // PostgreSQL's advisory lock lives on one connection; if that drops, another process may
        // already be writing, so this one must stop at once rather than write alongside it.
        lock.lost.addEventListener('abort', () => lockLost(life, telemetry, fail), { once: true });
        telemetry.leader(true);
      },
    });
    return store;
  } catch (err) {
    if (err instanceof StoreError && err.code === 'LOCK_ABORTED' && life.stop.signal.aborted) return null;
    throw err;
  }
}

function lockLost(life: Lifecycle, telemetry: DaemonTelemetry, fail: Failure): void {
  telemetry.health.state.lockLost = true;
  telemetry.leader(false);
  fail.error = new WsmirrorError(
    'LOCK_LOST',
    'The writer lock was lost (its database connection dropped); stopping so that two writers never overlap. The orchestrator should restart wsmirror.',
  );
  life.stop.abort(fail.error);
  life.abort.abort(fail.error);
}

/**
 * The first cycle at once, then one per tick, plus the nightly reconcile; returns after the stop.
 * A sync cycle that ends behind the upstream, or that overran a tick, is followed at once, within
 * the bounds of CatchUpPolicy (docs/sync.md, "Catch-up").
 */
async function scheduleCycles(
  res: Resources,
  life: Lifecycle,
  ctx: SyncContext,
  metrics: DaemonMetrics,
  health: HealthTracker,
  fail: Failure,
  recordWaiters: RecordWaiters,
): Promise<void> {
  const { config, logger } = res;
  const work = new ExclusiveWork(res, life, ctx, metrics, health, fail);
  const exclusive = (name: string, job: () => Promise<void>) => work.run(name, job);
  if (config.schedule === 'continuous') {
    const reconcileJob = scheduleReconcile(res, ctx, metrics, exclusive);
    life.defer(() => reconcileJob.stop());
    const nudges = new PollNudge();
    // A reader waiting for a record the mirror lacks is evidence of a write upstream: read it now.
    recordWaiters.onPending = () => nudges.nudge();
    await pollContinuously({ ...continuousLoop(res, life, ctx, work, metrics, health), nudges });
    recordWaiters.onPending = null;
    reconcileJob.stop();
    await work.running;
    return;
  }
  const catchUp = new CatchUpPolicy();
  const cycle = async (): Promise<void> => {
    while (!life.stop.signal.aborted) {
      work.tickMissed = false;
      const out: { result: CycleResult | null } = { result: null };
      const t0 = performance.now();
      const started = exclusive('sync', async () => {
        out.result = (await syncCycle(ctx, res.logger, res.config.history, metrics, health))?.result ?? null;
      });
      if (!started) return;
      const ok = await started;
      const behind = out.result?.stopped === false ? out.result.behindReason : null;
      const decision = catchUp.after({
        ok: ok && out.result !== null,
        behind,
        tickMissed: work.tickMissed,
        msToNextTick: syncJob.msToNext(),
        durationMs: performance.now() - t0,
      });
      if (life.stop.signal.aborted) return;
      if (decision.next === 'schedule') {
        if (decision.capped)
          logger.info(
            { reason: decision.reason, cycles: MAX_CATCH_UP_CYCLES },
            'still behind after the catch-up cycles allowed in a row; the next cycle waits for the schedule',
          );
        else if (decision.tickSoon)
          logger.debug({ reason: decision.reason }, 'behind, but the next tick is due sooner than a cycle takes; waiting for it');
        return;
      }
      logger.info({ reason: decision.reason, streak: decision.streak }, 'catching up: starting the next cycle at once');
    }
  };
  // Paused through the first cycle, which runs at once; catch-up asks it when the next tick falls.
  const syncJob = new Cron(config.schedule, { paused: true }, () => void cycle());
  life.defer(() => syncJob.stop());
  if (!life.stop.signal.aborted) await cycle();
  syncJob.resume();
  const reconcileJob = scheduleReconcile(res, ctx, metrics, exclusive);
  life.defer(() => reconcileJob.stop());
  await new Promise<void>((resolve) => {
    if (life.stop.signal.aborted) resolve();
    else life.stop.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  syncJob.stop();
  reconcileJob.stop();
  await work.running;
}

/** The nightly `verify --repair`, in the exclusive section like every cycle. */
function scheduleReconcile(
  res: Resources,
  ctx: SyncContext,
  metrics: DaemonMetrics,
  exclusive: (name: string, job: () => Promise<void>) => Promise<boolean> | null,
): Cron {
  return new Cron(
    res.config.reconcileSchedule,
    () =>
      void exclusive('reconcile', async () => {
        const { result, durationMs } = await recordRun(ctx, 'reconcile', (s) => runVerify(ctx, s, { repair: true, settleMs: 0 }));
        metrics.observeDuration('reconcile', durationMs / 1000);
        metrics.verified(result);
        res.logger.info({ drift: result.drift.length, repaired: result.repaired }, 'nightly reconcile');
      }),
  );
}

/** `schedule: "continuous"`: one sync after another, paced by src/daemon/continuous.ts. */
function continuousLoop(
  res: Resources,
  life: Lifecycle,
  ctx: SyncContext,
  work: ExclusiveWork,
  metrics: DaemonMetrics,
  health: HealthTracker,
): ContinuousLoop {
  const { config, logger } = res;
  const requests = () => ctx.client.stats().requests;
  return {
    stop: life.stop.signal,
    pacing: () => ({
      minPollIntervalMs: config.minPollIntervalMs,
      ratePerSecond: ctx.client.stats().ratePerSecond ?? (config.maxRequestsPerSecond === 'auto' ? 1 : config.maxRequestsPerSecond),
      everyWindowFull: config.fullLookbackEverySeconds === 0,
    }),
    cycle: async () => {
      const out: { summary: CycleSummary | null; syncFrom: number | null } = { summary: null, syncFrom: null };
      const started = work.run('sync', async () => {
        // Counted from the sync on: a backfill's requests are not the poll's (src/daemon/continuous.ts).
        const beforeSync = () => void (out.syncFrom = requests());
        out.summary = await syncCycle(ctx, logger, config.history, metrics, health, { foldIdle: true }, beforeSync);
      });
      if (!started) {
        await work.running;
        return null;
      }
      const ok = (await started) && out.summary !== null;
      return {
        ok,
        requests: out.syncFrom === null ? 0 : requests() - out.syncFrom,
        eventsNew: out.summary?.stats.eventsNew ?? 0,
        behind: out.summary?.result.behind ?? false,
        fullLookback: out.summary?.result.fullLookback ?? false,
      };
    },
    onPause: (delayMs, outcome) => logger.debug({ delayMs: Math.round(delayMs), ...outcome }, 'continuous: next change-log read'),
  };
}

/** One piece of work at a time (sync or reconcile); a tick that finds work running is skipped and noted. */
class ExclusiveWork {
  running: Promise<boolean> | null = null;
  /** Set when a sync tick was skipped; the scheduler clears it before each cycle. */
  tickMissed = false;

  constructor(
    private readonly res: Resources,
    private readonly life: Lifecycle,
    private readonly ctx: SyncContext,
    private readonly metrics: DaemonMetrics,
    private readonly health: HealthTracker,
    private readonly fail: Failure,
  ) {}

  /** Null when other work is running (the tick is skipped); else resolves true when the work succeeded. */
  run(name: string, work: () => Promise<void>): Promise<boolean> | null {
    const { logger } = this.res;
    if (this.running) {
      if (name === 'sync') this.tickMissed = true;
      this.metrics.cycle('skipped');
      logger.debug({ name }, 'tick skipped: the previous cycle is still running');
      return null;
    }
    this.health.cycleStarted(name);
    this.running = work()
      .then(() => {
        this.health.cycleEnded({ ok: true });
        return true;
      })
      .catch((err: unknown) => {
        if (err instanceof AuthRejectedError) {
          this.fail.error = err;
          this.life.stop.abort(err);
          return false;
        }
        this.health.cycleEnded({ ok: false, error: (err as Error).message, code: (err as { code?: unknown }).code as string | undefined });
        this.metrics.cycle('failed');
        logger.error(
          { err, consecutiveFailures: this.health.state.consecutiveFailures },
          `${name} failed; the next tick retries from the same watermark`,
        );
        return false;
      })
      // Inside the exclusive section: the checkpoint must not land in the middle of a transaction.
      .then(async (ok) => {
        await maintain(this.ctx, this.res, this.metrics).catch((err: unknown) =>
          logger.warn({ err }, 'mirror maintenance failed; the next cycle retries'),
        );
        return ok;
      })
      .finally(() => {
        this.running = null;
      });
    return this.running;
  }
}

/**
 * One tick: backfill while the mirror's backfill is unfinished (a failed or interrupted one
 * resumes from its persisted cursor), then sync.
 */
async function syncCycle(
  ctx: SyncContext,
  logger: Logger,
  history: Resources['config']['history'],
  metrics: DaemonMetrics,
  health: HealthTracker,
  runOptions: RecordRunOptions = {},
  beforeSync?: () => void,
): Promise<CycleSummary | null> {
  const backfill = await readBackfill(ctx.store);
  if (!backfill || backfill.phase !== 'done') {
    logger.info('the mirror is empty or its backfill unfinished: backfilling first');
    metrics.backfilling.set(1);
    health.state.backfill = { phase: backfill?.phase ?? FIRST_LIST, copied: { ...(backfill?.copied ?? {}) }, estimate: {} };
    try {
      const { result, stats, durationMs } = await recordRun(ctx, 'backfill', (s) =>
        runBackfill(ctx, s, {
          history,
          onProgress: (p) => {
            health.state.backfill = { phase: p.phase, copied: { ...p.copied }, estimate: health.state.backfill?.estimate ?? {} };
            for (const [list, n] of Object.entries(p.copied)) metrics.backfillDone.set({ list }, n);
            void estimateDeals(ctx.store, metrics, health);
          },
        }),
      );
      logBackfillSummary(logger, result, stats, durationMs);
      metrics.observeDuration('backfill', durationMs / 1000);
      metrics.cycle(ctx.stopSignal.aborted ? 'aborted' : 'success', stats);
    } finally {
      metrics.backfilling.set(0);
    }
    const after = await readBackfill(ctx.store);
    if (after?.phase === 'done') health.state.backfill = null;
    if (ctx.stopSignal.aborted) return null;
    health.cycleSplit('backfill', 'sync');
  }
  // Requests queued by `resync` and `backfill --since` while this process holds the mirror (src/sync/requests.ts).
  await serveWriterRequests(ctx);
  beforeSync?.();
  const summary = await syncOnce(ctx, 'sync', null, runOptions);
  metrics.observeDuration('sync', summary.durationMs / 1000);
  health.state.lagSeconds = summary.lagSeconds;
  // Unknown is NaN, never the last value or 0: a stale or zero lag would hide a mirror that cannot
  // tell how far behind it is (docs/operations.md).
  metrics.lag.set(summary.lagSeconds ?? Number.NaN);
  metrics.cycle(summary.result.stopped ? 'aborted' : 'success', summary.stats);
  return summary;
}

/** The upstream gives no list totals; the pipelines' dealCount sums to the deals a backfill will copy. */
async function estimateDeals(store: Store, metrics: DaemonMetrics, health: HealthTracker): Promise<void> {
  try {
    const n = await store.listedDealCount();
    if (n > 0 && health.state.backfill) {
      health.state.backfill.estimate.deals = n;
      metrics.backfillEstimate.set({ list: 'deals' }, n);
    }
  } catch {
    // An estimate only; the backfill's own progress is what counts.
  }
}

async function maintain(ctx: SyncContext, res: Resources, metrics: DaemonMetrics): Promise<void> {
  const watermark = await readWatermark(ctx.store);
  await maintainMirror({ store: ctx.store, watermark, retentionDays: res.config.eventsRetentionDays, metrics, logger: res.logger });
}
