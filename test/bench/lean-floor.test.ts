import { afterEach, describe, expect, it } from 'vitest';
import { floorBackfill } from '../../bench/floor.js';
import { TABLES } from '../../bench/floor-rows.js';
import { RPT_TABLE_NAMES } from '../../src/report/index.js';
import { openStore, type MirrorDatabase } from '../../src/store/index.js';
import { dialects } from '../helpers/dialects.js';
import { tableSnapshot } from '../helpers/snapshot.js';
import { API_KEY, harness as makeHarness, type Harness } from '../sync/harness.js';

/**
 * The benchmark's lean floor (bench/floor.ts) is only a floor of wsmirror's backfill if it stores
 * the same mirror: the same rows in every table it writes, the same values in every column
 * (wall-clock columns aside). A column added to the schema and filled by wsmirror, or a value
 * converted differently, fails here before it can make the floor cheaper than it should be.
 */
for (const dialect of dialects)
  describe(`the lean floor on ${dialect.name}`, () => {
    let h: Harness | null = null;
    let dropLean: (() => Promise<void>) | null = null;
    afterEach(async () => {
      await h?.close();
      await dropLean?.();
      h = null;
      dropLean = null;
    });

    it('stores exactly the rows a wsmirror backfill stores in every table it writes', async () => {
      h = await makeHarness({ sim: { seed: 31, tickets: 120, deals: 40 }, dialect });
      await h.backfill();
      const target = await dialect.newDatabase();
      dropLean = target.drop;
      const lean = await floorBackfill(h.sim.url, API_KEY, target.database);
      expect(lean.rows).toBeGreaterThan(120 + 40);

      const tables = TABLES.map((t) => t.name) as (keyof MirrorDatabase)[];
      const ignore = ['synced_at', 'received_at'];
      const leanStore = await openStore({ database: target.database, readonly: true });
      try {
        const ours = await tableSnapshot(h.store, tables, ignore);
        const theirs = await tableSnapshot(leanStore, tables, ignore);
        for (const table of tables) {
          expect(ours[table]!.length, table).toBeGreaterThan(0);
          expect(theirs[table], table).toEqual(ours[table]);
        }
      } finally {
        await leanStore.close();
      }
    });

    it('as the contract floor, also builds exactly the rpt_ tables a wsmirror backfill builds', async () => {
      h = await makeHarness({ sim: { seed: 32, tickets: 80, deals: 30 }, dialect });
      await h.backfill();
      const target = await dialect.newDatabase();
      dropLean = target.drop;
      const lean = await floorBackfill(h.sim.url, API_KEY, target.database, { contract: true });
      expect(lean.validateMs).toBeGreaterThan(0);

      // rpt_sync_health describes the sync's own runs and watermark, which the lean job does not keep.
      const tables = RPT_TABLE_NAMES.filter((t) => t !== 'rpt_sync_health') as unknown as (keyof MirrorDatabase)[];
      // Measured from the build's clock (an open interval or ticket ends now).
      const ignore = ['refreshed_at', 'synced_at', 'age_minutes', 'avg_days_in_stage', 'days_open'];
      const leanStore = await openStore({ database: target.database, readonly: true });
      try {
        const ours = await tableSnapshot(h.store, tables, ignore);
        const theirs = await tableSnapshot(leanStore, tables, ignore);
        expect(ours['rpt_tickets']!.length).toBe(80);
        const history = ['ticket_history', 'deal_history', 'history_gaps'] as (keyof MirrorDatabase)[];
        const wsmirrorHistory = await tableSnapshot(h.store, history, []);
        expect(wsmirrorHistory['ticket_history']!.length).toBeGreaterThan(0);
        expect(await tableSnapshot(leanStore, history, [])).toEqual(wsmirrorHistory);
        for (const table of tables) expect(theirs[table], table).toEqual(ours[table]);
      } finally {
        await leanStore.close();
      }
    });
  });
