/* eslint-disable @typescript-eslint/no-explicit-any */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readWidenedColumns, refreshRptTables, RPT_TABLE_NAMES } from '../../src/report/index.js';
import { SIMULATOR_DIALECTS, type Truth } from '../../src/simulator/index.js';
import { recordRun, runBackfill } from '../../src/sync/index.js';
import { dialects } from '../helpers/dialects.js';
import { unreadableRecords } from '../helpers/truth-history.js';
import { callApi, harness, type Harness } from '../sync/harness.js';
import { compareBiTables } from './bi-compare.js';
import type { Life } from './bi-oracle.js';
import { rows } from './oracle.js';
import { dump } from './stores.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** The tables of migration 1700, the last ones of the list. */
const BI_TABLES = RPT_TABLE_NAMES.slice(RPT_TABLE_NAMES.indexOf('rpt_ticket_custom_fields'));

/**
 * The custom field, versions and daily tables against the simulator's truth (test/report/bi-oracle.ts),
 * from an empty mirror through a backfill of the whole change log, then live cycles on later days
 * (the sync's own incremental refresh, on the simulator's clock) that add a custom field key, give
 * a number field a text value, delete a deal and change a deal's currency; under a dialect that
 * shows its changes and under the opaque ones, where the records whose changes the log hides are flagged.
 */
for (const upstream of ['default', 'opaque', 'opaque-changed'])
  for (const dialect of dialects)
    describe(`custom fields, versions and daily tables against the truth (${dialect.name}, upstream ${upstream})`, () => {
      let h: Harness;
      const snapshots: Truth[] = [];
      const gone: Life[] = [];
      const now = () => h.sim.control.now().toISOString();
      const sync = async () => {
        await h.sync();
        snapshots.push(h.sim.control.truth());
      };
      const check = async () => {
        const truth = h.sim.control.truth();
        return compareBiTables(h.store, truth, { now: now(), windowDays: 90, gone, snapshots });
      };
      const api = (method: string, path: string, body?: unknown) => callApi(h.sim, method, path, body);

      beforeAll(async () => {
        h = await harness({
          sim: {
            tickets: 12,
            deals: 6,
            realTime: false,
            startTime: new Date('2024-03-01T08:00:00.000Z'),
            dialect: SIMULATOR_DIALECTS[upstream],
          },
          dialect,
        });
        // The reports' "today" is the context's clock: the simulator's here, so its days are the window's.
        (h.ctx as { now: () => string }).now = now;
        await recordRun(h.ctx, 'backfill', (s) => runBackfill(h.ctx, s, { history: 'all' }));
        snapshots.push(h.sim.control.truth());
      }, 60_000);
      afterAll(async () => {
        await h?.close();
      });

      it('after the backfill', async () => {
        expect(await check()).toEqual([]);
      });

      it('after live changes on later days: a new key, a type change, a deleted deal', async () => {
        const truth0 = h.sim.control.truth();
        const tickets = truth0.tickets as any[];
        const deals = truth0.deals as any[];
        snapshots.push(h.sim.control.truth());
        h.sim.control.act(15);
        await sync();
        h.sim.control.advanceClock(DAY + 3 * HOUR);
        h.sim.control.defineCustomField('ticket', { key: 'renewal_on', type: 'text' });
        await api('PATCH', `/tickets/${tickets[0].id}`, { fields: { renewal_on: '2024-06-01' }, priority: 'high' });
        await api('PATCH', `/deals/${deals[0].id}`, { amount: '1234.50' });
        await sync();
        h.sim.control.advanceClock(2 * DAY);
        snapshots.push(h.sim.control.truth());
        h.sim.control.act(10);
        // An admin makes the number field a text one: the next value is not a number.
        h.sim.control.defineCustomField('ticket', { key: 'mrr', type: 'text' });
        await api('PATCH', `/tickets/${tickets[1].id}`, { fields: { mrr: 'n/a' } });
        const victim = (h.sim.control.truth().deals as any[]).find((d) => d.id === deals[1].id);
        gone.push({ kind: 'deal', record: victim, deletedAt: null });
        await api('DELETE', `/deals/${deals[1].id}`);
        await sync();
        h.sim.control.advanceClock(HOUR);
        await sync();
        expect(await check()).toEqual([]);
        const cols = await rows(
          h.store,
          `SELECT key, column_name, type, widened_from FROM rpt_custom_field_columns WHERE entity_type = 'ticket'`,
        );
        expect(cols.find((c) => c.key === 'mrr')).toMatchObject({ type: 'text', widened_from: 'number' });
        expect(cols.find((c) => c.key === 'renewal_on')).toMatchObject({ type: 'date' });
        expect((await readWidenedColumns(h.store)).map((w) => [w.key, w.from])).toEqual([['mrr', 'number']]);
        const deleted = await rows(h.store, `SELECT max(day) AS last FROM rpt_deal_daily WHERE deal_id = '${deals[1].id}'`);
        expect(String(deleted[0].last instanceof Date ? deleted[0].last.toISOString() : deleted[0].last).slice(0, 10)).toBe(
          now().slice(0, 10),
        );
      }, 60_000);

      it('a deal whose currency changes on a later day: its days before show the old currency, the days from it the new', async () => {
        const deal = (h.sim.control.truth().deals as any[])[0];
        const from: string = deal.currency;
        const to = from === 'EUR' ? 'USD' : 'EUR';
        h.sim.control.advanceClock(DAY);
        await api('PATCH', `/deals/${deal.id}`, { currency: to });
        const changeDay = now().slice(0, 10);
        await sync();
        h.sim.control.advanceClock(DAY);
        await sync();
        expect(await check()).toEqual([]);
        const days = (await rows(h.store, `SELECT day, currency FROM rpt_deal_daily WHERE deal_id = '${deal.id}'`)).map((r) => ({
          day: (r.day instanceof Date ? r.day.toISOString() : String(r.day)).slice(0, 10),
          currency: r.currency,
        }));
        const before = days.filter((d) => d.day < changeDay);
        const after = days.filter((d) => d.day >= changeDay);
        expect(before.length).toBeGreaterThan(0);
        expect(after.length).toBe(2);
        for (const d of before) expect(d, 'before the change').toEqual({ day: d.day, currency: from });
        for (const d of after) expect(d, 'from the change').toEqual({ day: d.day, currency: to });
      }, 60_000);

      it('flags exactly the records whose changes the log hides', async () => {
        const hidden = unreadableRecords(h.sim.control.truth());
        const flagged = await rows(
          h.store,
          `SELECT DISTINCT 'ticket:' || ticket_id AS k FROM rpt_ticket_versions WHERE complete = ${dialect.name === 'postgres' ? 'false' : '0'}
           UNION SELECT DISTINCT 'deal:' || deal_id FROM rpt_deal_versions WHERE complete = ${dialect.name === 'postgres' ? 'false' : '0'}`,
        );
        expect(flagged.map((r) => r.k).sort()).toEqual([...hidden.keys()].sort());
        if (upstream !== 'default') expect(hidden.size).toBeGreaterThan(0);
      });

      it('the incremental tables equal a full rebuild at the same clock', async () => {
        const incremental = await dump(h.store);
        await refreshRptTables(h.store, { tickets: 'all', deals: 'all' }, { now: h.sim.control.now() });
        const full = await dump(h.store);
        for (const t of BI_TABLES) expect(incremental[t], t).toEqual(full[t]);
      });
    });
