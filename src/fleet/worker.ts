import { setMaxListeners } from 'node:events';
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { PgBoss } from 'pg-boss';
import type pg from 'pg';
import { Agent } from 'undici';
import { exitAtOnce, Lifecycle } from '../session/index.js';
import { createLogger, type Logger } from '../log/index.js';
import { openSharedPostgres } from '../store/index.js';
import type { SecretRedactor } from '../util/redact.js';
import { FLEET_SCHEMA, loadFleetFile, QUEUE_SCHEMA } from './config.js';
import { applyFleet, openFleetPool, refreshViews } from './db.js';
import { startFleetHttp } from './http.js';
import { pageReader } from './workspace-page.js';
import { FleetMetrics } from './metrics.js';
import { SliceDispatcher } from './dispatch.js';
import { ensureSlices, startQueue } from './queue.js';
import { QueueGarbageWatch, readOldestSnapshot, readQueueGarbage } from './queue-garbage.js';
import { pruneSlices } from './rows.js';
import { runSlice, type SliceEnv } from './slice.js';

/** How often each worker re-enqueues workspaces without a slice and says it is alive. */
const SUPERVISE_MS = 10_000;
/** Every this many supervision passes (a minute), the queue's tables are checked for unvacuumed rows. */
const GARBAGE_EVERY = 6;

/** The password of the fleet's database URL, so no log line can carry it. */
export function registerDatabaseSecret(database: string, redactor: SecretRedactor): void {
  try {
    const password = decodeURIComponent(new URL(database).password);
    if (password) redactor.add(password, encodeURIComponent(password));
  } catch {
    // Not a URL: the schema rejected it already.
  }
}

/**
 * `wsmirror fleet worker`: reconcile the file into the fleet table, then run slices from the queue
 * (`concurrency` at once) until SIGTERM; the slices in flight stop at their next page and commit.
 */
export async function runFleetWorker(
  configPath: string,
  options: { concurrency?: number; httpPort?: number },
  redactor: SecretRedactor,
): Promise<void> {
  const fleet = loadFleetFile(configPath);
  registerDatabaseSecret(fleet.database, redactor);
  const logger = createLogger({ level: fleet.worker.logLevel, redactor });
  const concurrency = options.concurrency ?? fleet.worker.concurrency;
  const life = new Lifecycle();
  const workerId = `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
  const health = { alive: true, ready: false };
  try {
    life.handleSignals({
      graceMs: (fleet.worker.sliceSeconds + 10) * 1000,
      onFirst: (signal) => logger.info({ signal }, 'stopping: no new slices; those in flight commit first'),
      onForce: exitAtOnce,
    });
    const { pool, shared, agent } = await openConnections(fleet.database, concurrency, life);
    const metrics = new FleetMetrics();
    // Up before the reconcile, so a probe sees a starting worker (/readyz 503), not a refused connection.
    const http = { ...fleet.worker.http, port: options.httpPort ?? fleet.worker.http.port };
    if (http.port !== 0) {
      const ready = () => health.ready && !life.stop.signal.aborted;
      const reader = pageReader(fleet.database, redactor);
      life.defer(() => reader.end());
      const server = await startFleetHttp({ ...http, pool, metrics, logger, reader, alive: () => health.alive, ready });
      life.defer(() => closeServer(server));
    }
    const applied = await applyFleet(pool, fleet.workspaces);
    logger.info({ ...applied, workspaces: fleet.workspaces.length }, 'fleet file reconciled');
    const boss = await startQueue(fleet.database, { supervise: true, onError: (err) => queueError(logger, health, err) });
    life.defer(() => boss.stop({ graceful: true, timeout: (fleet.worker.sliceSeconds + 5) * 1000 }));
    // Each slice in flight listens for the stop: `concurrency` listeners is the design, not a leak.
    setMaxListeners(concurrency + 10, life.stop.signal);
    const env: SliceEnv = {
      pool,
      shared,
      agent,
      database: fleet.database,
      logger,
      logLevel: fleet.worker.logLevel,
      redactor,
      sliceSeconds: fleet.worker.sliceSeconds,
      stop: life.stop.signal,
      workerId,
    };
    const garbage = new QueueGarbageWatch();
    let passes = 0;
    const pass = () => supervise(boss, pool, { workerId, concurrency, logger, garbage: passes++ % GARBAGE_EVERY === 0 ? garbage : null });
    await pass();
    const timer = setInterval(() => void pass(), SUPERVISE_MS);
    life.defer(() => clearInterval(timer));
    const dispatcher = new SliceDispatcher(boss, {
      concurrency,
      stop: life.stop.signal,
      onError: (err) => queueError(logger, health, err),
      run: async ({ id }) => {
        const report = await runSlice(env, id);
        if (report.kind !== 'none')
          metrics.sliceDuration.observe({ kind: report.kind, result: report.ok ? 'ok' : 'failed' }, report.durationMs / 1000);
        return report.next;
      },
    });
    // Resolves after the stop, once the slices in flight have committed and been settled.
    const dispatching = dispatcher.run();
    health.ready = true;
    logger.info({ workerId, concurrency, workspaces: fleet.workspaces.length }, 'fleet worker started');
    await dispatching;
    await pool.query(`delete from ${FLEET_SCHEMA}.workers where id = $1`, [workerId]).catch(() => undefined);
    logger.info('stopped');
  } finally {
    await life.close();
  }
}

/** The fleet table's pool, the connections slices' stores borrow, and the upstream agent slices' clients share. */
async function openConnections(database: string, concurrency: number, life: Lifecycle) {
  const pool = openFleetPool(database, 4);
  life.defer(() => pool.end());
  // Two connections per slice at most (its store's, and its writer lock's), plus one spare.
  const shared = await openSharedPostgres(database, concurrency * 2 + 1);
  life.defer(() => shared.end());
  // One keep-alive pool per upstream origin for every slice: a workspace's next slice reuses its
  // connection (no new TCP and TLS handshake a slice), each client bounding its own concurrency.
  const agent = new Agent({ keepAliveTimeout: 30_000 });
  life.defer(() => agent.close());
  return { pool, shared, agent };
}

interface Supervision {
  workerId: string;
  concurrency: number;
  logger: Logger;
  /** This pass also checks the queue's tables for rows vacuum does not reclaim. */
  garbage: QueueGarbageWatch | null;
}

/** Alive, and every unpaused workspace has a slice queued. Failures are logged and retried next time. */
async function supervise(boss: PgBoss, pool: pg.Pool, { workerId, concurrency, logger, garbage }: Supervision): Promise<void> {
  try {
    await pool.query(
      `insert into ${FLEET_SCHEMA}.workers (id, host, pid, concurrency) values ($1, $2, $3, $4)
       on conflict (id) do update set seen_at = now()`,
      [workerId, hostname(), process.pid, concurrency],
    );
    await pool.query(`delete from ${FLEET_SCHEMA}.workers where seen_at < now() - interval '1 hour'`);
    const started = await ensureSlices(boss, pool);
    if (started.length > 0) logger.debug({ workspaces: started }, 'slices queued for workspaces that had none');
    const views = await refreshViews(pool);
    if (views.rebuilt) logger.info('cross-workspace views rebuilt');
    if (views.error !== null) logger.warn({ error: views.error }, 'rebuilding the cross-workspace views failed; retrying in 10 s');
    await pruneSlices(pool);
    if (garbage) warnGarbage(garbage.observe(await readQueueGarbage(pool, QUEUE_SCHEMA), await readOldestSnapshot(pool)), logger);
  } catch (err) {
    logger.warn({ err }, 'fleet supervision failed; retrying in 10 s');
  }
}

function warnGarbage(warnings: ReturnType<QueueGarbageWatch['observe']>, logger: Logger): void {
  for (const w of warnings)
    logger.warn(
      w,
      w.reason === 'pinned'
        ? `vacuum of the job queue's table ${w.table} cannot free its ${w.dead} dead rows: a snapshot held since ${w.heldSince?.toISOString()} (a transaction in pg_stat_activity, a prepared transaction or a replication slot) keeps them; slices slow down until it ends`
        : `autovacuum has not vacuumed the job queue's table ${w.table} for two minutes while its dead rows grew to ${w.dead} (past ${Math.round(w.budget)}): check that autovacuum is on for it and keeps up, or VACUUM it on a schedule`,
    );
}

function queueError(logger: Logger, health: { alive: boolean }, err: Error): void {
  logger.warn({ err }, 'job queue error');
  if (/ECONNREFUSED|terminat/i.test(err.message)) health.alive = false;
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}
