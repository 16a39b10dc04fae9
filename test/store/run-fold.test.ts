import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/index.js';
import { refreshSyncHealthOnly } from '../../src/report/index.js';
import { dialects } from '../helpers/dialects.js';
import { databaseOf } from '../../src/store/internal.js';
import { useDialectStore } from './fixtures.js';

type Outcome = 'success' | 'failed' | 'aborted';
interface Run {
  kind?: string;
  at: string;
  outcome?: Outcome;
  eventsNew?: number;
  recordsFetched?: number;
}

/**
 * sync_runs.cycles (migration 1100, docs/schema.md "sync_runs"): with foldIdle, an idle run folds
 * into the idle row before it (same kind, started less than an hour earlier); anything else is a
 * row of its own, and rpt_sync_health counts cycles, not rows.
 */
for (const dialect of dialects)
  describe(`folding idle runs into one sync_runs row (${dialect.name})`, () => {
    const store = useDialectStore(dialect);

    const run = (s: Store, r: Run) =>
      s.transaction(async (tx) => {
        const id = await tx.startRun(r.kind ?? 'sync', r.at);
        return tx.finishRun(
          id,
          {
            finishedAt: r.at.replace(/:00\.000Z$/, ':01.000Z'),
            outcome: r.outcome ?? 'success',
            eventsRead: 2,
            eventsNew: r.eventsNew ?? 0,
            recordsFetched: r.recordsFetched ?? 0,
            requests: 2,
            retries: 1,
          },
          { foldIdle: true },
        );
      });

    it('folds idle polls, keeps every other run, and starts a new row after an hour', async () => {
      const s = store;
      const folded: boolean[] = [];
      for (const r of [
        { at: '2026-03-01T10:00:00.000Z' }, // idle: first row
        { at: '2026-03-01T10:01:00.000Z' }, // folds
        { at: '2026-03-01T10:02:00.000Z' }, // folds
        { at: '2026-03-01T10:03:00.000Z', eventsNew: 1, recordsFetched: 1 }, // found something: own row
        { at: '2026-03-01T10:04:00.000Z' }, // idle after a busy run: own row
        { at: '2026-03-01T10:05:00.000Z', outcome: 'failed' as const }, // failed: own row
        { at: '2026-03-01T10:06:00.000Z' }, // idle after a failure: own row
        { at: '2026-03-01T10:07:00.000Z', kind: 'verify' }, // another kind: own row
        { at: '2026-03-01T10:08:00.000Z' }, // idle after a verify: own row
        { at: '2026-03-01T11:07:00.000Z' }, // folds (that row started 59 min earlier)
        { at: '2026-03-01T11:09:00.000Z' }, // an hour after that row began: own row
      ])
        folded.push(await run(s, r));
      expect(folded).toEqual([false, true, true, false, false, false, false, false, false, true, false]);

      const rows = await databaseOf(s)
        .selectFrom('sync_runs')
        .select(['kind', 'started_at', 'finished_at', 'cycles', 'requests', 'retries', 'events_read'])
        .orderBy('id')
        .execute();
      expect(rows.map((r) => [r.kind, r.cycles])).toEqual([
        ['sync', 3],
        ['sync', 1],
        ['sync', 1],
        ['sync', 1],
        ['sync', 1],
        ['verify', 1],
        ['sync', 2],
        ['sync', 1],
      ]);
      expect(rows[0]).toMatchObject({
        started_at: '2026-03-01 10:00:00.000',
        finished_at: '2026-03-01 10:02:01.000',
        requests: 6,
        retries: 3,
        events_read: 6,
      });
      expect(rows[6]).toMatchObject({ started_at: '2026-03-01 10:08:00.000', finished_at: '2026-03-01 11:07:01.000' });

      // Without foldIdle (cron schedules, one-shot commands) every run is a row.
      await s.transaction(async (tx) => {
        const id = await tx.startRun('sync', '2026-03-01T11:10:00.000Z');
        const r = {
          finishedAt: '2026-03-01T11:10:01.000Z',
          outcome: 'success' as const,
          eventsRead: 0,
          eventsNew: 0,
          recordsFetched: 0,
          requests: 2,
          retries: 0,
        };
        expect(await tx.finishRun(id, r)).toBe(false);
      });

      await refreshSyncHealthOnly(s, { now: new Date('2026-03-01T12:00:00.000Z') });
      const health = (
        await sql<{ runs_24h: number; failed_runs_24h: number }>`SELECT runs_24h, failed_runs_24h FROM rpt_sync_health`.execute(
          databaseOf(s),
        )
      ).rows[0]!;
      expect([Number(health.runs_24h), Number(health.failed_runs_24h)]).toEqual([12, 1]);
    });
  });
