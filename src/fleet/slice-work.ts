import type { RequestEvent } from '../api/index.js';
import type { Config } from '../config/index.js';
import type { Logger } from '../log/index.js';
import { openClient, openLockedMirror, openWriterSession, syncContext, type Lifecycle, type Resources } from '../session/index.js';
import type { SharedPostgres, Store } from '../store/index.js';
import {
  pruneRetainedEvents,
  readAsOf,
  readBackfill,
  readWatermark,
  recordRun,
  runBackfill,
  runVerify,
  syncOnce,
  type SyncContext,
} from '../sync/index.js';
import { markMigrated } from './db.js';
import { markReconcileBegun, type SliceKind, type WorkspaceRow } from './rows.js';
import { reconcileDue } from './schedule.js';
import type pg from 'pg';
import type { Agent } from 'undici';
import type { SecretRedactor } from '../util/redact.js';

/** What a worker lends every slice it runs. */
export interface SliceEnv {
  pool: pg.Pool;
  /** The connections every slice's store borrows (its workspace's schema set on each). */
  shared: SharedPostgres;
  /** The upstream connections every slice's client borrows (kept alive between a workspace's slices). */
  agent: Agent;
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

/** What a slice's requests told: how many, the learned rate, and the latest instant a `Retry-After` asked for. */
export interface Counted {
  requests: number;
  rate: number | null;
  /** Epoch ms before which the upstream asked not to be called again (0: it did not). */
  notBefore: number;
}

function countRequest(counted: Counted, e: RequestEvent): void {
  counted.requests++;
  if (e.retryAfterMs !== undefined) counted.notBefore = Math.max(counted.notBefore, Date.now() + e.retryAfterMs);
}

export interface WorkDone {
  kind: SliceKind;
  backfilling: boolean;
  behind: boolean;
  fullLookback: boolean;
  eventsNew: number;
  requests: number;
  phase: string | null;
  lagSeconds: number | null;
  currentAsOf: string | null;
}

/**
 * The single-workspace engine, unchanged: a bounded piece of the backfill, the nightly reconcile
 * (`verify --repair`, when `reconcileSchedule` has ticked since the last one), or one sync cycle.
 */
export async function sliceWork(
  env: SliceEnv,
  row: WorkspaceRow,
  config: Config,
  life: Lifecycle,
  logger: Logger,
  counted: Counted,
): Promise<WorkDone> {
  const res: Resources = { config, logger, redactor: env.redactor, shared: env.shared, agent: env.agent };
  const client = openClient(res, life, (e) => countRequest(counted, e), row.ratePerSecond ?? undefined);
  const store = await openSliceStore(env, row, res, life, client);
  const ctx = syncContext(res, store, client, life);
  const before = await readBackfill(store);
  const out =
    before?.phase !== 'done'
      ? await backfillPiece(ctx, config)
      : reconcileDue(config.reconcileSchedule, row.lastReconcileAt ?? row.addedAt)
        ? await reconcile(env, row, ctx, logger)
        : await syncCycle(ctx, config, logger);
  out.requests = counted.requests;
  out.currentAsOf = (await readAsOf(store))?.asOf ?? null;
  counted.rate = client.stats().ratePerSecond ?? counted.rate;
  return out;
}

const DONE: Omit<WorkDone, 'kind'> = {
  backfilling: false,
  behind: false,
  fullLookback: false,
  eventsNew: 0,
  requests: 0,
  phase: 'done',
  lagSeconds: null,
  currentAsOf: null,
};

async function backfillPiece(ctx: SyncContext, config: Config): Promise<WorkDone> {
  await recordRun(ctx, 'backfill', (s) => runBackfill(ctx, s, { history: config.history }));
  const after = await readBackfill(ctx.store);
  return { ...DONE, kind: 'backfill', backfilling: after?.phase !== 'done', phase: after?.phase ?? null };
}

async function syncCycle(ctx: SyncContext, config: Config, logger: Logger): Promise<WorkDone> {
  const summary = await syncOnce(ctx, 'sync', null, { foldIdle: config.schedule === 'continuous' });
  await maintain(ctx, config, logger);
  return {
    ...DONE,
    kind: 'sync',
    behind: summary.result.stopped || summary.result.behind,
    fullLookback: summary.result.fullLookback,
    eventsNew: summary.stats.eventsNew,
    lagSeconds: summary.lagSeconds,
  };
}

/**
 * `run`'s nightly reconcile, as a slice: verify every list against the mirror and re-read what
 * differs, under the workspace's writer lock like any slice (docs/fleet.md, "Slices"). A sync
 * follows at once. One attempt per tick (markReconcileBegun): a failed one shows on the row and the
 * next tick tries again.
 */
async function reconcile(env: SliceEnv, row: WorkspaceRow, ctx: SyncContext, logger: Logger): Promise<WorkDone> {
  await markReconcileBegun(env.pool, row.id);
  const { result } = await recordRun(ctx, 'reconcile', (s) => runVerify(ctx, s, { repair: true, settleMs: 0 }));
  logger.info({ drift: result.drift.length, repaired: result.repaired }, 'nightly reconcile');
  return { ...DONE, kind: 'reconcile', behind: true };
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
    await pruneRetainedEvents(ctx.store, await readWatermark(ctx.store), config.eventsRetentionDays);
  } catch (err) {
    logger.warn({ err }, 'pruning old change-log events failed; the next slice retries');
  }
}
