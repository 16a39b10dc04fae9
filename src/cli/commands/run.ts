import { Cron } from 'croner';
import { AuthRejectedError } from '../../api/index.js';
import { DaemonMetrics, startHealthServer, type HealthState } from '../../daemon/index.js';
import { recordRun, runBackfill, runVerify, STATE, type BackfillState } from '../../sync/index.js';
import { WsmirrorError } from '../../util/errors.js';
import { exitAtOnce, Lifecycle } from '../lifecycle.js';
import { loadResources, openClient, openMirror, syncContext, type GlobalFlags } from '../resources.js';
import { syncOnce } from './sync.js';

/**
 * `wsmirror run`: wait for the writer lock (hot standby), backfill an empty mirror, then one sync
 * per schedule tick. A tick that finds work still running is skipped, not queued. The first
 * SIGTERM stops the schedule and lets the page in flight commit; a second one exits at once.
 */
export async function runDaemon(flags: GlobalFlags, secrets: string[]): Promise<void> {
  const res = loadResources(flags, secrets);
  const { config, logger } = res;
  const life = new Lifecycle();
  const metrics = new DaemonMetrics();
  const health: HealthState = { role: 'standby', lastSuccessAt: null, consecutiveFailures: 0, lagSeconds: null, lastError: null };
  let fatal: unknown = null;
  try {
    life.handleSignals({
      graceMs: 10_000,
      onFirst: (signal) => {
        health.role = 'stopping';
        logger.info({ signal }, 'stopping: no new cycles; the page in flight commits first (send the signal again to stop at once)');
      },
      onForce: exitAtOnce,
    });
    if (config.http.port !== 0) {
      const server = await startHealthServer({ host: config.http.host, port: config.http.port, metrics, health: () => health, logger });
      life.defer(() => server.close());
    }
    const client = openClient(res, life);
    await client.eventsPage({ limit: 1 }); // a rejected key stops here, before anything is written
    const store = await openMirror(res, life);
    metrics.leader.set(0);
    const lock = await store.acquireWriterLock({
      wait: true,
      signal: life.stop.signal,
      onWaiting: () => logger.info('another process is writing this mirror; waiting as a hot standby'),
    });
    life.defer(() => lock.release());
    if (life.stop.signal.aborted) return;
    // PostgreSQL's advisory lock lives on one connection; if that drops, another process may
    // already be writing, so this one must stop at once rather than write alongside it.
    lock.lost.addEventListener(
      'abort',
      () => {
        fatal = new WsmirrorError('LOCK_LOST', 'The writer lock was lost (its database connection dropped); stopping so that two writers never overlap. The orchestrator should restart wsmirror.');
        life.stop.abort(fatal);
        life.abort.abort(fatal);
      },
      { once: true },
    );
    health.role = 'writer';
    metrics.leader.set(1);
    logger.info({ schedule: config.schedule }, 'writer lock held; this process keeps the mirror');

    const ctx = syncContext(res, store, client, life, { onRecord: (type, outcome) => metrics.record(type, outcome) });
    const refreshGauges = async () => {
      metrics.dirty.set(await store.dirtyCount());
      const counts = await store.counts();
      metrics.quarantined.set(counts.quarantine ?? 0);
    };

    let running: Promise<void> | null = null;
    const exclusive = (name: string, work: () => Promise<void>) => {
      if (running) {
        metrics.cycle('skipped');
        logger.debug({ name }, 'tick skipped: the previous cycle is still running');
        return running;
      }
      running = work()
        .then(() => {
          health.consecutiveFailures = 0;
          health.lastError = null;
          health.lastSuccessAt = new Date().toISOString();
        })
        .catch((err: unknown) => {
          if (err instanceof AuthRejectedError) {
            fatal = err;
            life.stop.abort(err);
            return;
          }
          health.consecutiveFailures++;
          health.lastError = (err as Error).message;
          metrics.cycle('failed');
          logger.error({ err, consecutiveFailures: health.consecutiveFailures }, `${name} failed; the next tick retries from the same watermark`);
        })
        .finally(() => {
          running = null;
          return refreshGauges().catch(() => undefined);
        });
      return running;
    };

    // Each tick backfills while the mirror's backfill is unfinished (a failed or interrupted one
    // resumes from its persisted cursor), and syncs once it is done.
    const cycle = () =>
      exclusive('sync', async () => {
        const backfill = await store.getState<BackfillState>(STATE.backfill);
        if (!backfill || backfill.phase !== 'done') {
          logger.info('the mirror is empty or its backfill unfinished: backfilling first');
          const { stats } = await recordRun(ctx, 'backfill', (s) => runBackfill(ctx, s, { history: config.history }));
          metrics.cycle(ctx.stopSignal.aborted ? 'aborted' : 'success', stats);
          if (ctx.stopSignal.aborted) return;
        }
        const summary = await syncOnce(ctx, 'sync', null);
        health.lagSeconds = summary.lagSeconds;
        if (summary.lagSeconds !== null) metrics.lag.set(summary.lagSeconds);
        metrics.cycle(summary.result.stopped ? 'aborted' : 'success', summary.stats);
      });
    if (!life.stop.signal.aborted) await cycle();

    const syncJob = new Cron(config.schedule, () => void cycle());
    const reconcileJob = new Cron(config.reconcileSchedule, () =>
      void exclusive('reconcile', async () => {
        const { result } = await recordRun(ctx, 'reconcile', (s) => runVerify(ctx, s, { repair: true }));
        logger.info({ drift: result.drift.length, repaired: result.repaired }, 'nightly reconcile');
      }),
    );
    life.defer(() => {
      syncJob.stop();
      reconcileJob.stop();
    });
    await new Promise<void>((resolve) => {
      if (life.stop.signal.aborted) resolve();
      else life.stop.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    syncJob.stop();
    reconcileJob.stop();
    await running;
    logger.info('stopped');
  } finally {
    await life.close();
  }
  if (fatal) throw fatal;
}
