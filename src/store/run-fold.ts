import type { Kysely } from 'kysely';
import type { MirrorDatabase } from './schema.js';
import type { RunResult } from './tx.js';
import { requiredTs } from './values.js';

/**
 * How long one folded row may grow: idle polls fold into the previous row only while it started
 * less than this before, so a day of idle continuous mode is 24 rows, not 86,400 (one a second),
 * and the cycle table still shows when the mirror was polled.
 */
export const FOLD_SPAN_MS = 60 * 60 * 1000;

/** An idle run: it succeeded and found nothing (no event new to the mirror, no record re-read). */
export function isIdleRun(r: Pick<RunResult, 'outcome' | 'eventsNew' | 'recordsFetched'>): boolean {
  return r.outcome === 'success' && r.eventsNew === 0 && r.recordsFetched === 0;
}

/**
 * Folds the finished idle run `id` into the row just before it when that row is an idle run of
 * the same kind started within FOLD_SPAN_MS: its figures are added, its `cycles` counted and its
 * end moved on, and row `id` is deleted (docs/schema.md, sync_runs). Returns false, changing
 * nothing, when the run cannot fold.
 */
export async function foldIdleRun(db: Kysely<MirrorDatabase>, id: number, r: RunResult): Promise<boolean> {
  if (!isIdleRun(r)) return false;
  const finishedAt = requiredTs(r.finishedAt, 'finishedAt');
  const rows = await db.selectFrom('sync_runs').selectAll().where('id', '<=', id).orderBy('id', 'desc').limit(2).execute();
  const [current, prev] = rows;
  if (!current || !prev || Number(current.id) !== id) return false;
  const spanStart = requiredTs(new Date(Date.parse(`${finishedAt.replace(' ', 'T')}Z`) - FOLD_SPAN_MS), 'spanStart');
  const foldable =
    prev.kind === current.kind &&
    prev.finished_at !== null &&
    isIdleRun({
      outcome: prev.outcome as RunResult['outcome'],
      eventsNew: prev.events_new ?? 0,
      recordsFetched: prev.records_fetched ?? 0,
    }) &&
    requiredTs(prev.started_at, 'started_at') > spanStart;
  if (!foldable) return false;
  await db
    .updateTable('sync_runs')
    .set({
      finished_at: finishedAt,
      events_read: Number(prev.events_read ?? 0) + r.eventsRead,
      requests: Number(prev.requests ?? 0) + r.requests,
      retries: Number(prev.retries ?? 0) + r.retries,
      cycles: Number(prev.cycles) + 1,
    })
    .where('id', '=', prev.id)
    .execute();
  await db.deleteFrom('sync_runs').where('id', '=', id).execute();
  return true;
}

/** What a run's row holds until it finishes: no figures yet. */
const JUST_BEGUN = {
  finished_at: null,
  outcome: 'running',
  error: null,
  events_read: 0,
  events_new: 0,
  records_fetched: 0,
  requests: 0,
  retries: 0,
} as const;

/** A sync_runs row with outcome 'running'; returns its id. One statement: needs no transaction of its own. */
export async function insertRun(db: Kysely<MirrorDatabase>, kind: string, startedAt: string): Promise<number> {
  const row = await db
    .insertInto('sync_runs')
    .values({ kind, started_at: startedAt, ...JUST_BEGUN })
    .returning('id')
    .executeTakeFirstOrThrow();
  return Number(row.id);
}
