import { createApiClient } from '../../api/index.js';
import {
  CLOCK_TRUST_MS,
  lateHoldEnd,
  lateLately,
  plausibleHead,
  readBackfill,
  readLastCycle,
  readLateEvent,
  readWatermark,
  readWindow,
  type LastCycle,
  type LateEvent,
} from '../../sync/index.js';
import type { Selectable } from 'kysely';
import { DEFERRED_INDEXES_KEY, type DeferredIndex, type MirrorDatabase, type Store } from '../../store/index.js';
import { fromDbTimestamp } from '../../util/time.js';
import type { GlobalFlags } from '../resources.js';
import { openReader } from '../session.js';
import { lagBetween } from './sync.js';
import type { SecretRedactor } from '../secrets.js';

export interface StatusReport {
  database: string;
  backfill: { phase: string; copied: Record<string, number> } | null;
  watermark: string | null;
  windowInProgress: boolean;
  /**
   * The workspace's head and lag, and its clock: `clockSkewSeconds` is its Date header minus the
   * local clock (null without a usable Date), `clockTrusted` false when that lies beyond the
   * tolerance and the local clock bounds event times instead (docs/sync.md, "Hostile upstream").
   */
  upstream: {
    head: string | null;
    lagSeconds: number | null;
    clockSkewSeconds?: number | null;
    clockTrusted?: boolean;
    error?: string;
  } | null;
  /**
   * The last event a window read later than the guaranteed tick overlap reaches (docs/sync.md,
   * "The overlap's cost"), and until when ticks re-read the whole overlap because of it.
   */
  lateEvent: (LateEvent & { wholeOverlapUntil: string }) | null;
  /**
   * Secondary indexes a first SQLite backfill dropped and builds at its end (docs/sync.md,
   * "Backfill"); queries on those tables run without them until then. Empty otherwise.
   */
  deferredIndexes: string[];
  /** What the last finished cycle saw: its head and lag, known even when the upstream cannot be asked now. */
  lastCycle: LastCycle | null;
  /** The latest sync_runs row, its timestamps in ISO form. */
  lastRun: LastRun | null;
  lastSuccessAt: string | null;
  counts: Record<string, number>;
  dirty: number;
  /** SQLite: bytes of the mirror and its WAL (the running writer checkpoints the WAL after each cycle). */
  storage: { databaseBytes: number; walBytes: number } | null;
  /** The events table: how far back it reaches, and the retention the writer applies. */
  events: { oldest: string | null; retentionDays: number };
  quarantined: { entityType: string; entityId: string; reason: string; lastSeenAt: string }[];
  /** Quarantined rows per entity type (`event` included), all of them, not only the 20 listed. */
  quarantinedByType: Record<string, number>;
}

type LastRun = Omit<Selectable<MirrorDatabase['sync_runs']>, 'started_at' | 'finished_at'> & {
  started_at: string | null;
  finished_at: string | null;
};

/** A reader: no lock, never blocked by the writer. Asks the workspace for its head when it can. */
export async function statusCommand(flags: GlobalFlags, opts: { json?: boolean }, redactor: SecretRedactor): Promise<void> {
  const { res, life, store } = await openReader(flags, redactor);
  try {
    const watermark = await readWatermark(store);
    const backfill = await readBackfill(store);
    const window = await readWindow(store);
    const lastCycle = await readLastCycle(store);
    const late = await readLateEvent(store);
    const deferred = (await store.getState<DeferredIndex[]>(DEFERRED_INDEXES_KEY)) ?? [];
    const runs = await store.db.selectFrom('sync_runs').selectAll().orderBy('id', 'desc').limit(50).execute();
    const lastRun = runs[0] ?? null;
    const lastSuccess = runs.find((r) => r.outcome === 'success') ?? null;
    const quarantine = await store.db
      .selectFrom('quarantine')
      .select(['entity_type', 'entity_id', 'reason', 'last_seen_at'])
      .orderBy('last_seen_at', 'desc')
      .limit(20)
      .execute();
    const byType = await store.db
      .selectFrom('quarantine')
      .select(['entity_type', (eb) => eb.fn.countAll<string>().as('n')])
      .groupBy('entity_type')
      .execute();
    let upstream: StatusReport['upstream'] = null;
    if (res.config.baseUrl && res.config.apiKey) {
      const client = createApiClient({
        baseUrl: res.config.baseUrl,
        apiKey: res.config.apiKey,
        retry: { maxAttempts: 1 },
        requestTimeoutMs: Math.min(res.config.requestTimeoutMs, 10_000),
      });
      try {
        const page = await client.eventsPage({ limit: 1 });
        const { head, unknown, clock } = plausibleHead(page, new Date().toISOString());
        upstream = {
          head,
          lagSeconds: unknown ? null : lagBetween(head, watermark),
          clockSkewSeconds: clock.skewMs === null ? null : Math.round(clock.skewMs / 1000),
          clockTrusted: clock.trusted,
        };
      } catch (err) {
        upstream = { head: null, lagSeconds: null, error: (err as Error).message };
      } finally {
        await client.close();
      }
    }
    const report: StatusReport = {
      // The store's label names the database without its password.
      database: store.label,
      backfill: backfill ? { phase: backfill.phase, copied: backfill.copied } : null,
      watermark,
      windowInProgress: window !== null,
      lateEvent: late ? { ...late, wholeOverlapUntil: lateHoldEnd(late.seenAt) } : null,
      deferredIndexes: deferred.map((i) => i.name),
      upstream,
      lastCycle,
      // ISO in the report, as the watermark and upstream head are, whatever form the store keeps.
      lastRun: lastRun
        ? { ...lastRun, started_at: fromDbTimestamp(lastRun.started_at), finished_at: fromDbTimestamp(lastRun.finished_at) }
        : null,
      lastSuccessAt: lastSuccess ? fromDbTimestamp(lastSuccess.finished_at) : null,
      counts: await store.counts(),
      dirty: await store.dirtyCount(),
      quarantinedByType: Object.fromEntries(byType.map((r) => [r.entity_type, Number(r.n)])),
      storage: storageOf(store.fileSizes()),
      events: { oldest: await oldestEvent(store), retentionDays: res.config.eventsRetentionDays },
      quarantined: quarantine.map((q) => ({
        entityType: q.entity_type,
        entityId: q.entity_id,
        reason: q.reason,
        lastSeenAt: fromDbTimestamp(q.last_seen_at) ?? '',
      })),
    };
    process.stdout.write(opts.json ? `${JSON.stringify(report, null, 2)}\n` : renderStatus(report));
  } finally {
    await life.close();
  }
}

function renderStatus(r: StatusReport): string {
  const lines = [
    `Mirror:      ${r.database}`,
    `Backfill:    ${
      r.backfill
        ? `${r.backfill.phase} (${Object.entries(r.backfill.copied)
            .map(([k, v]) => `${v} ${k}`)
            .join(', ')})`
        : 'not started'
    }`,
    ...(r.deferredIndexes.length > 0 ? [`Indexes:     ${deferredIndexesLine(r.deferredIndexes)}`] : []),
    `Watermark:   ${r.watermark ?? 'none'}${r.windowInProgress ? ' (a window is in progress; the next sync resumes it)' : ''}`,
    `Upstream:    ${r.upstream === null ? 'not configured (set WSMIRROR_BASE_URL and WSMIRROR_API_KEY to see the lag)' : r.upstream.error ? `unreachable: ${r.upstream.error}` : `head ${r.upstream.head ?? 'none'}, lag ${r.upstream.lagSeconds ?? 'unknown'} s`}`,
    ...(r.upstream !== null && r.upstream.error === undefined ? [`Clock:       ${clockLine(r.upstream)}`] : []),
    `Late events: ${lateEventLine(r.lateEvent, new Date().toISOString())}`,
    `Last cycle:  ${r.lastCycle ? `${r.lastCycle.at}, head ${r.lastCycle.head ?? 'none'}, lag ${r.lastCycle.lagSeconds ?? 'unknown'} s` : 'none'}`,
    `Last run:    ${r.lastRun ? lastRunLine(r.lastRun) : 'none'}`,
    `Last success: ${r.lastSuccessAt ?? 'never'}`,
    `Dirty:       ${r.dirty} record(s) waiting to be re-read`,
    `Events:      oldest ${r.events.oldest ?? 'none'}; kept ${r.events.retentionDays === 0 ? 'forever' : `${r.events.retentionDays} days before the watermark`}`,
    ...(r.storage ? [`Storage:     ${mib(r.storage.databaseBytes)} database, ${mib(r.storage.walBytes)} WAL`] : []),
    `Quarantined: ${
      r.quarantined.length === 0
        ? 'none'
        : Object.entries(r.quarantinedByType)
            .map(([type, n]) => `${n} ${type}`)
            .join(', ')
    }`,
    ...r.quarantined.map((q) => `  - ${q.entityType} ${q.entityId}: ${q.reason} (last seen ${q.lastSeenAt})`),
    'Rows:',
    ...Object.entries(r.counts).map(([table, n]) => `  ${table.padEnd(18)} ${n}`),
  ];
  return `${lines.join('\n')}\n`;
}

/** The status line while a first backfill builds its secondary indexes at its end. */
export function deferredIndexesLine(names: readonly string[]): string {
  return `${names.length} secondary index(es) dropped for the first backfill, built when it ends or stops; queries run without them until then (a writer that starts builds them if a killed backfill left them out)`;
}

/** The status line on the workspace's clock against this machine's (docs/sync.md, "Hostile upstream"). */
export function clockLine(u: Pick<NonNullable<StatusReport['upstream']>, 'clockSkewSeconds' | 'clockTrusted'>): string {
  const skew = u.clockSkewSeconds;
  if (skew === null || skew === undefined) return 'the workspace sent no usable Date header; the local clock bounds event times';
  const side = `${Math.abs(skew)} s ${skew >= 0 ? 'ahead of' : 'behind'} this machine's`;
  return u.clockTrusted
    ? `the workspace's clock is ${side} (within the ${CLOCK_TRUST_MS / 1000} s tolerance)`
    : `the workspace's clock is ${side}, beyond the ${CLOCK_TRUST_MS / 1000} s tolerance: the local clock bounds event times; check either clock`;
}

/** The status line on late-visible events: none, or the last one and whether ticks still re-read the whole overlap. */
export function lateEventLine(late: StatusReport['lateEvent'], now: string): string {
  if (late === null) return 'none seen beyond the guaranteed tick overlap';
  // The same rule the sync plans its ticks by (src/sync/window.ts).
  const hold = lateLately(late.seenAt, now)
    ? `ticks re-read the whole overlap until ${late.wholeOverlapUntil}`
    : 'ticks re-read the guaranteed overlap again';
  return `last ${late.eventId} (occurred ${late.occurredAt}), read ${late.seenAt}; ${hold}`;
}

function lastRunLine(run: LastRun): string {
  const counts = `${run.events_read ?? 0} events read, ${run.records_fetched ?? 0} records, ${run.requests ?? 0} requests`;
  return `${run.kind} ${run.outcome ?? 'interrupted'} at ${run.started_at} (${counts})${run.error ? `: ${run.error}` : ''}`;
}

function storageOf(sizes: { database: number; wal: number } | null): StatusReport['storage'] {
  return sizes ? { databaseBytes: sizes.database, walBytes: sizes.wal } : null;
}

async function oldestEvent(store: Store): Promise<string | null> {
  const row = await store.db
    .selectFrom('events')
    .select((eb) => eb.fn.min('occurred_at').as('oldest'))
    .executeTakeFirst();
  return fromDbTimestamp(row?.oldest);
}

function mib(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
