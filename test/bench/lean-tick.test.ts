import { afterEach, describe, expect, it } from 'vitest';
import { floorBackfill } from '../../bench/floor.js';
import { floorSync } from '../../bench/floor-sync.js';
import { TABLES } from '../../bench/floor-rows.js';
import { RPT_TABLE_NAMES } from '../../src/report/index.js';
import { openStore, type MirrorDatabase, type Store } from '../../src/store/index.js';
import { databaseOf } from '../../src/store/internal.js';
import { readWatermark } from '../../src/sync/index.js';
import { dialectPreset } from '../../src/simulator/index.js';
import { dialects } from '../helpers/dialects.js';
import { tableSnapshot } from '../helpers/snapshot.js';
import { API_KEY, harness as makeHarness, type Harness } from '../sync/harness.js';

const LOOKBACK_MS = 300_000;

type Snapshot = Awaited<ReturnType<typeof tableSnapshot>>;

/**
 * Holds the floor's mirror at `database` to wsmirror's (`ours`): every one of `tables` with the
 * same rows, after each of `changed` moved from `before` (so the writes reached what is compared).
 */
async function expectSameRows(
  ours: Store,
  database: string,
  tables: (keyof MirrorDatabase)[],
  ignore: string[],
  before: Snapshot,
  changed: string[],
  more?: (floor: Store) => Promise<void>,
): Promise<void> {
  const floor = await openStore({ database, readonly: true });
  try {
    const mine = await tableSnapshot(ours, tables, ignore);
    const theirs = await tableSnapshot(floor, tables, ignore);
    for (const table of changed) expect(mine[table], table).not.toEqual(before[table]);
    for (const table of tables) expect(theirs[table], table).toEqual(mine[table]);
    await more?.(floor);
  } finally {
    await floor.close();
  }
}

/**
 * The tick's lean equivalent (bench/floor-sync.ts) is only a floor of wsmirror's tick if it
 * leaves the same mirror: after the same writes upstream, the same rows in every record table
 * (wall-clock columns aside) as wsmirror's sync writes, deletions and re-written child rows included.
 * It starts from the lean backfill's mirror, whose rows test/bench/lean-floor.test.ts holds equal
 * to wsmirror's backfill. It makes wsmirror's requests (the list-based plan), so it also makes as
 * many: 500 writes on 300 tickets and 80 deals take several ticket list pages, reads by id of
 * tickets whose messages moved, deal reads answered 404, and tickets taken from the list whose
 * stored messages must stay.
 */
for (const dialect of dialects)
  describe(`the tick's lean equivalent on ${dialect.name}`, () => {
    let h: Harness | null = null;
    let dropLean: (() => Promise<void>) | null = null;
    afterEach(async () => {
      await h?.close();
      await dropLean?.();
      h = null;
      dropLean = null;
    });

    it('leaves the record tables with exactly the rows a wsmirror sync leaves after the same writes', async () => {
      h = await makeHarness({ sim: { seed: 37, tickets: 300, deals: 80 }, dialect });
      await h.backfill();
      const target = await dialect.newDatabase();
      dropLean = target.drop;
      await floorBackfill(h.sim.url, API_KEY, target.database);
      const watermark = (await readWatermark(h.store))!;
      const window = { since: new Date(Date.parse(watermark) - LOOKBACK_MS).toISOString(), watermark };

      const tables = TABLES.map((t) => t.name) as (keyof MirrorDatabase)[];
      const ignore = ['synced_at', 'received_at'];
      const before = await tableSnapshot(h.store, tables, ignore);
      h.sim.control.act(500);
      h.sim.control.clearRequests();
      const lean = await floorSync(h.sim.url, API_KEY, target.database, window);
      const leanSeen = h.sim.control.requests().length;
      h.sim.control.clearRequests();
      await h.sync();
      const oursSeen = h.sim.control.requests().length;
      expect(lean.rows).toBeGreaterThan(500);
      // The same plan as wsmirror's (list pages, reads by id only where the list cannot stand in).
      expect(lean.requests).toBe(leanSeen);
      console.log(`${dialect.name}: lean tick ${leanSeen} requests, wsmirror's sync ${oursSeen}`);
      expect(Math.abs(leanSeen - oursSeen)).toBeLessThanOrEqual(3);

      // The writes changed what both must store: tickets, their messages, deals, the log.
      await expectSameRows(
        h.store,
        target.database,
        tables,
        ignore,
        before,
        ['tickets', 'ticket_messages', 'deals', 'events'],
        async (leanStore) => {
          const deleted = async (s: Store) =>
            (await databaseOf(s).selectFrom('tickets').select('id').where('deleted_at', 'is not', null).execute()).map((r) => r.id).sort();
          expect(await deleted(leanStore)).toEqual(await deleted(h!.store));
        },
      );
    });

    // Under `opaque`, changes are logged without from and to: the history is the observed one,
    // found by comparing each read with its stored copy (docs/sync.md, "History").
    for (const preset of ['default', 'opaque'])
      it(`as the contract floor, also leaves the history, the gaps and the rpt_ rows a wsmirror sync leaves (${preset} change log)`, async () => {
        h = await makeHarness({ sim: { seed: 41, tickets: 200, deals: 60, dialect: dialectPreset(preset) }, dialect });
        await h.backfill();
        const target = await dialect.newDatabase();
        dropLean = target.drop;
        // The contract backfill's mirror holds wsmirror's history and rpt_ rows (test/bench/lean-floor.test.ts).
        await floorBackfill(h.sim.url, API_KEY, target.database, { contract: true });
        const watermark = (await readWatermark(h.store))!;
        const window = { since: new Date(Date.parse(watermark) - LOOKBACK_MS).toISOString(), watermark };
        const history = ['ticket_history', 'deal_history', 'history_gaps'] as (keyof MirrorDatabase)[];
        // rpt_sync_health describes the sync's own runs; the others are measured from the refresh's clock.
        const reports = RPT_TABLE_NAMES.filter((t) => t !== 'rpt_sync_health') as unknown as (keyof MirrorDatabase)[];
        const ignore = ['refreshed_at', 'synced_at', 'age_minutes', 'avg_days_in_stage', 'days_open', 'received_at'];
        const all = [...(TABLES.map((t) => t.name) as (keyof MirrorDatabase)[]), ...history, ...reports];
        const before = await tableSnapshot(h.store, all, ignore);

        h.sim.control.act(400);
        const contract = await floorSync(h.sim.url, API_KEY, target.database, window, { contract: true });
        await h.sync();
        expect(contract.validateMs).toBeGreaterThan(0);
        expect(contract.reportMs).toBeGreaterThan(0);

        // The writes told new history and moved the reporting rows of what they touched.
        await expectSameRows(h.store, target.database, all, ignore, before, ['events', 'ticket_history', 'rpt_tickets', 'rpt_deals']);
        const observed = await databaseOf(h.store)
          .selectFrom('ticket_history')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('source', '=', 'observed')
          .executeTakeFirstOrThrow();
        if (preset === 'opaque') expect(Number(observed.n)).toBeGreaterThan(0);
      });
  });
