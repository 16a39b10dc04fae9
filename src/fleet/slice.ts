import type pg from 'pg';
import { abortableSleep } from '../api/limiter.js';
import { Lifecycle, openClient, openLockedMirror, syncContext, type Resources, openWriterSession } from '../session/index.js';
import type { RequestEvent } from '../api/index.js';
import type { Config } from '../config/index.js';
import type { Logger } from '../log/index.js';
import type { SharedPostgres, Store } from '../store/index.js';
import { readAsOf, readBackfill, readWatermark, recordRun, runBackfill, syncOnce, type SyncContext } from '../sync/index.js';
import type { SecretRedactor } from '../util/redact.js';
import { readApiKey, workspaceConfig } from './config.js';
import { markMigrated } from './db.js';
import { beginSlice, readWorkspace, recordSlice, type WorkspaceRow } from './rows.js';
import { nextSliceDelay } from './schedule.js';

/** What a worker lends every slice it runs. */
export interface SliceEnv {
  pool: pg.Pool;
  /** The connections every slice's store borrows (its workspace's schema set on each). */
  shared: SharedPostgres;
  database: string;
  logger: Logger;
  logLevel: string;
  redactor: SecretRedactor;
  /** A slice stops (the page in flight commits) this long after it began. */
  sliceSeconds: number;
  /** The worker is stopping: slices in flight stop as at their deadline. */
  stop: AbortSignal;
  /** Recorded on the row while a slice runs (status shows where). */
  workerId: string;
}

/** The next slice to enqueue; null: none (paused or removed: the supervisor re-enqueues on resume). */
export interface NextSlice {
  delayMs: number;
}

export interface SliceReport {
  kind: 'backfill' | 'sync' | 'none';
  ok: boolean;
  durationMs: number;
  next: NextSlice | null;
}

/** Runs one slice of workspace `id` and records it on its row; throws only when the fleet's own database fails. */
export async function runSlice(env: SliceEnv, id: string): Promise<SliceReport> {
  const row = await readWorkspace(env.pool, id);
  if (!row || row.paused) return { kind: 'none', ok: true, durationMs: 0, next: null };
  const began = performance.now();
  const life = new Lifecycle();
  const deadline = setTimeout(() => life.stop.abort(new Error('slice deadline')), env.sliceSeconds * 1000);
  const onStop = () => life.stop.abort(new Error('worker stopping'));
  env.stop.addEventListener('abort', onStop, { once: true });
  const counted: Counted = { requests: 0, rate: row.ratePerSecond, notBefore: 0 };
  const logger = env.logger.child({ workspace: id });
  let config: Config | null = null;
  try {
    const apiKey = readApiKey(row);
    env.redactor.add(apiKey);
    config = workspaceConfig(row, env.database, apiKey, env.logLevel);
    const fixed = config.maxRequestsPerSecond === 'auto' ? (row.ratePerSecond ?? 1) : config.maxRequestsPerSecond;
    await abortableSleep(await beginSlice(env.pool, id, fixed, env.workerId), life.stop.signal).catch(() => undefined);
    const work = await sliceWork(env, row, config, life, logger, counted);
    const durationMs = performance.now() - began;
    const delayMs = honourRetryAfter(
      counted,
      nextSliceDelay(config, {
        ...work,
        ok: true,
        elapsedMs: durationMs,
        failuresInARow: 0,
        errorCode: null,
        ratePerSecond: counted.rate ?? fixed,
      }),
    );
    await recordSlice(env.pool, id, {
      kind: work.kind,
      ok: true,
      state: work.backfilling ? 'backfilling' : work.behind ? 'behind' : 'current',
      durationMs,
      requests: counted.requests,
      ratePerSecond: counted.rate,
      backfillPhase: work.phase,
      lagSeconds: work.lagSeconds,
      currentAsOf: work.currentAsOf,
      error: null,
      nextAt: new Date(Date.now() + delayMs),
    });
    return { kind: work.kind, ok: true, durationMs, next: { delayMs } };
  } catch (err) {
    return await sliceFailed(env, row, config, err, { began, counted, logger });
  } finally {
    clearTimeout(deadline);
    env.stop.removeEventListener('abort', onStop);
    await life.close().catch((err: unknown) => logger.warn({ err }, 'closing the slice failed'));
  }
}

/** What a slice's requests told: how many, the learned rate, and the latest instant a `Retry-After` asked for. */
interface Counted {
  requests: number;
  rate: number | null;
  /** Epoch ms before which the upstream asked not to be called again (0: it did not). */
  notBefore: number;
}

function countRequest(counted: Counted, e: RequestEvent): void {
  counted.requests++;
  if (e.retryAfterMs !== undefined) counted.notBefore = Math.max(counted.notBefore, Date.now() + e.retryAfterMs);
}

/**
 * The upstream's `Retry-After` outlasts the slice that heard it (its retries ran out, or the slice
 * deadline came first): the next slice waits for it whatever the schedule says.
 */
function honourRetryAfter(counted: Counted, delayMs: number): number {
  return Math.max(delayMs, counted.notBefore - Date.now());
}

interface WorkDone {
  kind: 'backfill' | 'sync';
  backfilling: boolean;
  behind: boolean;
  fullLookback: boolean;
  eventsNew: number;
  requests: number;
  phase: string | null;
  lagSeconds: number | null;
  currentAsOf: string | null;
}

/** The single-workspace engine, unchanged: a bounded piece of the backfill, or one sync cycle. */
async function sliceWork(
  env: SliceEnv,
  row: WorkspaceRow,
  config: Config,
  life: Lifecycle,
  logger: Logger,
  counted: Counted,
): Promise<WorkDone> {
  const res: Resources = { config, logger, redactor: env.redactor, shared: env.shared };
  const client = openClient(res, life, (e) => countRequest(counted, e), row.ratePerSecond ?? undefined);
  const store = await openSliceStore(env, row, res, life, client);
  const ctx = syncContext(res, store, client, life);
  const before = await readBackfill(store);
  const done = (): WorkDone['kind'] => (before?.phase === 'done' ? 'sync' : 'backfill');
  let out: WorkDone;
  if (done() === 'backfill') {
    await recordRun(ctx, 'backfill', (s) => runBackfill(ctx, s, { history: config.history }));
    const after = await readBackfill(store);
    const backfilling = after?.phase !== 'done';
    out = {
      kind: 'backfill',
      backfilling,
      behind: false,
      fullLookback: false,
      eventsNew: 0,
      requests: 0,
      phase: after?.phase ?? null,
      lagSeconds: null,
      currentAsOf: null,
    };
  } else {
    const summary = await syncOnce(ctx, 'sync', null, { foldIdle: config.schedule === 'continuous' });
    await maintain(ctx, config, logger);
    const behind = summary.result.stopped || summary.result.behind;
    out = {
      kind: 'sync',
      backfilling: false,
      behind,
      fullLookback: summary.result.fullLookback,
      eventsNew: summary.stats.eventsNew,
      requests: 0,
      phase: 'done',
      lagSeconds: summary.lagSeconds,
      currentAsOf: null,
    };
  }
  out.requests = counted.requests;
  out.currentAsOf = (await readAsOf(store))?.asOf ?? null;
  counted.rate = client.stats().ratePerSecond ?? counted.rate;
  return out;
}

/**
 * The workspace's schema under its writer lock (never waiting: a held lock means another slice is
 * still in it, and this one yields). Until a first slice has succeeded, one probe request proves the
 * key before anything is written, as a single-workspace writer does.
 */
async function openSliceStore(
  env: SliceEnv,
  row: WorkspaceRow,
  res: Resources,
  life: Lifecycle,
  client: ReturnType<typeof openClient>,
): Promise<Store> {
  const lock = { wait: false } as const;
  const { store, applied } =
    row.lastSuccessAt === null ? await openWriterSession(res, life, { client, lock }) : await openLockedMirror(res, life, lock);
  if (!row.migrated || applied.length > 0) await markMigrated(env.pool, row.id, applied.length > 0);
  return store;
}

/** The daemon's retention rule (eventsRetentionDays), without its per-cycle row counts. */
async function maintain(ctx: SyncContext, config: Config, logger: Logger): Promise<void> {
  try {
    const watermark = await readWatermark(ctx.store);
    if (config.eventsRetentionDays === 0 || watermark === null) return;
    await ctx.store.pruneEvents(new Date(Date.parse(watermark) - config.eventsRetentionDays * 86_400_000).toISOString());
  } catch (err) {
    logger.warn({ err }, 'pruning old change-log events failed; the next slice retries');
  }
}

/** A slice that failed: its own row shows it, the next slice backs off, every other workspace goes on. */
async function sliceFailed(
  env: SliceEnv,
  row: WorkspaceRow,
  config: Config | null,
  err: unknown,
  at: { began: number; counted: Counted; logger: Logger },
): Promise<SliceReport> {
  const code = (err as { code?: unknown }).code;
  const errorCode = typeof code === 'string' ? code : 'UNEXPECTED';
  const message = env.redactor.redact(err instanceof Error ? err.message : String(err));
  const durationMs = performance.now() - at.began;
  if (errorCode === 'LOCK_HELD') {
    // Another slice of this workspace still runs (a worker presumed dead that is not): try shortly.
    return { kind: 'none', ok: true, durationMs, next: { delayMs: 2000 } };
  }
  at.logger.warn({ code: errorCode, err: message }, 'slice failed; this workspace backs off, the others go on');
  const failuresInARow = row.consecutiveFailures + 1;
  const result = {
    ok: false,
    backfilling: false,
    behind: false,
    fullLookback: false,
    eventsNew: 0,
    requests: at.counted.requests,
    elapsedMs: durationMs,
    failuresInARow,
    errorCode,
    ratePerSecond: 1,
  };
  const delayMs = honourRetryAfter(at.counted, config ? nextSliceDelay(config, result) : Math.min(5000 * 2 ** failuresInARow, 300_000));
  const state = errorCode === 'AUTH_REJECTED' ? 'key_rejected' : errorCode === 'KEY_UNAVAILABLE' ? 'key_unavailable' : 'failing';
  await recordSlice(env.pool, row.id, {
    kind: 'sync',
    ok: false,
    state,
    durationMs,
    requests: at.counted.requests,
    ratePerSecond: null,
    backfillPhase: null,
    lagSeconds: null,
    currentAsOf: null,
    error: { code: errorCode, message },
    nextAt: new Date(Date.now() + delayMs),
  });
  return { kind: 'sync', ok: false, durationMs, next: { delayMs } };
}
