import { Migrator, sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { loadMigrations } from '../../migrations/index.js';
import * as m0900 from '../../migrations/0900_history_gaps.js';
import { openStore, type Store } from '../../src/store/index.js';
import { dialects } from '../helpers/dialects.js';
import { databaseOf } from '../../src/store/internal.js';
import { readSyncState } from '../../src/store/sync-state.js';

const migrations = await loadMigrations();

/** Migration 0900 on a mirror of the previous release: the gaps table, the reason columns, and a full refresh due. */
for (const dialect of dialects)
  describe(`migration 0900 on a mirror of the previous release (${dialect.name})`, () => {
    let store: Store | null = null;
    let drop: (() => Promise<void>) | null = null;
    afterEach(async () => {
      await store?.close();
      await drop?.();
      store = null;
    });

    it('adds history_gaps and the reason columns, keeps the rpt_ rows, and makes the next refresh a full one', async () => {
      const target = await dialect.newDatabase();
      drop = target.drop;
      store = await openStore({ database: target.database });
      const migrator = new Migrator({ db: databaseOf(store), provider: { getMigrations: () => Promise.resolve(migrations) } });
      expect((await migrator.migrateTo('0800_dirty_failed_reads')).error).toBeUndefined();
      const at = '2024-05-01 09:00:00.000';
      await sql`INSERT INTO rpt_tickets (ticket_id, history_complete, refreshed_at) VALUES ('t1', ${1}, ${at})`.execute(databaseOf(store));
      await sql`INSERT INTO rpt_deals (deal_id, history_complete, refreshed_at) VALUES ('d1', ${0}, ${at})`.execute(databaseOf(store));

      expect((await store.migrate()).applied).toEqual([
        '0900_history_gaps',
        '1000_current_as_of',
        '1100_sync_runs_cycles',
        '1600_writer_requests',
        '1700_custom_fields_versions_daily',
      ]);
      // A process killed before the migrator recorded it runs it again: harmless.
      await m0900.up(databaseOf(store));
      const t = await sql<{ ticket_id: string; history_incomplete_reason: string | null }>`
        SELECT ticket_id, history_incomplete_reason FROM rpt_tickets`.execute(databaseOf(store));
      expect(t.rows).toEqual([{ ticket_id: 't1', history_incomplete_reason: null }]);
      const d = await sql<{ n: number }>`SELECT count(history_incomplete_reason) AS n FROM rpt_deals`.execute(databaseOf(store));
      expect(Number(d.rows[0]!.n)).toBe(0);
      await databaseOf(store)
        .insertInto('history_gaps')
        .values({
          entity_type: 'deal',
          entity_id: 'd1',
          event_id: 'e1',
          event_type: 'deal.updated',
          occurred_at: at,
          fields: 'stage_id,status',
          reason: 'r',
        })
        .execute();
      expect(await databaseOf(store).selectFrom('history_gaps').select(['entity_id', 'occurred_at']).execute()).toEqual([
        { entity_id: 'd1', occurred_at: at },
      ]);
      expect(await readSyncState(store, 'reporting_stale')).toBe(true);
    });
  });
