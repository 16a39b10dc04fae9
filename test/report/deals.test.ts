import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { toDbTimestamp } from '../../src/util/time.js';
import { readHeadlines, refreshRptTables, RPT_TABLE_NAMES } from '../../src/report/index.js';
import { dialects } from '../helpers/dialects.js';
import { days, minutes, rows, snapshot } from './oracle.js';
import { NOW } from './scenario.js';
import { useScenarioStore } from './stores.js';
import { databaseOf } from '../../src/store/internal.js';

const ts = (s: string) => `2024-${s}:00.000Z`;
const S = (iso: string) => toDbTimestamp(iso) as string;

for (const dialect of dialects)
  describe(`sales reporting tables (hand-written mirror) (${dialect.name})`, () => {
    const store = useScenarioStore(dialect);

    it('rpt_deals: won/lost times from history, fallbacks, ages, primary contact', async () => {
      const r = Object.fromEntries((await rows(store, 'SELECT * FROM rpt_deals')).map((x) => [x.deal_id, x]));
      expect(Object.keys(r).sort()).toEqual(['DL1', 'DL2', 'DL3', 'DL4', 'DL6']);
      expect(r.DL1).toMatchObject({
        pipeline_name: 'Sales',
        stage_name: 'Won',
        stage_position: 2,
        amount: 1000,
        amount_cents: 100000,
        owner_name: 'Otto Owner',
        company_name: 'Acme',
        primary_contact_id: 'c1',
        primary_contact_name: 'Ada Lovelace',
        won_at: ts('02-20T10:00'),
        lost_at: null,
        closed_at: ts('02-20T10:00'),
        days_open: null,
        days_to_close: 10,
        history_complete: 1,
        close_date: '2024-03-31',
      });
      expect(r.DL2).toMatchObject({ lost_at: ts('03-02T00:00'), won_at: null, days_to_close: 19, amount: 500.5 });
      expect(r.DL3).toMatchObject({
        stage_entered_at: ts('03-05T00:00'),
        days_open: days(ts('03-01T12:00'), NOW.toISOString()),
        days_to_close: null,
        won_at: null,
      });
      expect(r.DL4).toMatchObject({
        won_at: ts('03-01T08:00'),
        history_complete: 0,
        days_to_close: days(ts('01-05T00:00'), ts('03-01T08:00')),
      });
      expect(r.DL6).toMatchObject({ amount: null, amount_cents: null, owner_id: null, days_open: 0.5 });
    });

    it('the clock step rewrites an open deal row only when its whole-minute days_open moves', async () => {
      const at = (ms: number) => new Date(NOW.getTime() + ms);
      const dl3 = () => rows(store, "SELECT days_open, refreshed_at FROM rpt_deals WHERE deal_id = 'DL3'");
      const open = days(ts('03-01T12:00'), NOW.toISOString());
      expect(await dl3()).toEqual([{ days_open: open, refreshed_at: NOW.toISOString() }]);
      // A ticket changed, no deal did: the deal rows move by the clock step alone.
      await refreshRptTables(store, { tickets: new Set(['T3']), deals: new Set() }, { now: at(59_999) });
      expect(await dl3()).toEqual([{ days_open: open, refreshed_at: NOW.toISOString() }]);
      await refreshRptTables(store, { tickets: new Set(['T3']), deals: new Set() }, { now: at(60_000) });
      expect(await dl3()).toEqual([{ days_open: (open * 1440 + 1) / 1440, refreshed_at: at(60_000).toISOString() }]);
      // A deal re-read in that refresh gets the same value as the clock step gives the others.
      await refreshRptTables(store, { tickets: new Set(), deals: new Set(['DL3']) }, { now: at(119_999) });
      expect(await dl3()).toEqual([{ days_open: (open * 1440 + 1) / 1440, refreshed_at: at(119_999).toISOString() }]);
    });

    it('rpt_deal_stage_intervals: stays, minutes and direction', async () => {
      const iv = await rows(
        store,
        "SELECT seq, stage_id, stage_name, entered_at, exited_at, minutes, direction FROM rpt_deal_stage_intervals WHERE deal_id = 'DL3' ORDER BY seq",
      );
      expect(iv.map((x) => [x.stage_id, x.entered_at, x.exited_at, x.minutes, x.direction])).toEqual([
        ['s1', ts('03-01T12:00'), ts('03-03T12:00'), 2880, null],
        ['s2', ts('03-03T12:00'), ts('03-04T12:00'), 1440, 'forward'],
        ['s1', ts('03-04T12:00'), ts('03-05T00:00'), 720, 'back'],
        ['s2', ts('03-05T00:00'), null, null, 'forward'],
      ]);
      const dl1 = await rows(store, "SELECT stage_id, minutes FROM rpt_deal_stage_intervals WHERE deal_id = 'DL1' ORDER BY seq");
      expect(dl1).toEqual([
        { stage_id: 's1', minutes: minutes(ts('02-10T10:00'), ts('02-15T10:00')) },
        { stage_id: 's2', minutes: minutes(ts('02-15T10:00'), ts('02-20T10:00')) },
        { stage_id: 's3', minutes: null },
      ]);
      expect(await rows(store, "SELECT count(*) AS n FROM rpt_deal_stage_intervals WHERE deal_id = 'DL5'")).toEqual([{ n: 0 }]);
    });

    it('rpt_pipeline_stages: open deals per stage and currency', async () => {
      const p = await rows(
        store,
        'SELECT stage_id, currency, open_deals, total_amount, total_amount_cents, avg_days_in_stage FROM rpt_pipeline_stages ORDER BY stage_id, currency',
      );
      expect(p).toEqual([
        { stage_id: 's1', currency: 'USD', open_deals: 1, total_amount: null, total_amount_cents: null, avg_days_in_stage: 0.5 },
        { stage_id: 's2', currency: 'EUR', open_deals: 1, total_amount: 250.25, total_amount_cents: 25025, avg_days_in_stage: 1 },
      ]);
    });

    it('rpt_sales_monthly: created, won, lost per month, pipeline, owner and currency', async () => {
      // NULLS FIRST: SQLite sorts NULL first by default, PostgreSQL last.
      const m = await rows(
        store,
        `SELECT month, owner_id, currency, deals_created, won_count, won_amount_cents, lost_count, lost_amount_cents,
      win_rate_count, win_rate_value, avg_won_amount, avg_days_to_close FROM rpt_sales_monthly ORDER BY month, owner_id NULLS FIRST, currency`,
      );
      const row = (month: string, owner: string | null, currency: string, o: Record<string, unknown>) => ({
        month,
        owner_id: owner,
        currency,
        deals_created: 0,
        won_count: 0,
        won_amount_cents: 0,
        lost_count: 0,
        lost_amount_cents: 0,
        win_rate_count: null,
        win_rate_value: null,
        avg_won_amount: null,
        avg_days_to_close: null,
        ...o,
      });
      expect(m).toEqual([
        row('2024-01-01', 'o2', 'USD', { deals_created: 1 }),
        row('2024-02-01', 'o1', 'EUR', {
          deals_created: 1,
          won_count: 1,
          won_amount_cents: 100000,
          win_rate_count: 1,
          win_rate_value: 1,
          avg_won_amount: 1000,
          avg_days_to_close: 10,
        }),
        row('2024-02-01', 'o1', 'USD', { deals_created: 1 }),
        row('2024-03-01', null, 'USD', { deals_created: 1 }),
        row('2024-03-01', 'o1', 'USD', { lost_count: 1, lost_amount_cents: 50050, win_rate_count: 0, win_rate_value: 0 }),
        row('2024-03-01', 'o2', 'EUR', { deals_created: 1 }),
        row('2024-03-01', 'o2', 'USD', {
          won_count: 1,
          won_amount_cents: 9999,
          win_rate_count: 1,
          win_rate_value: 1,
          avg_won_amount: 99.99,
          avg_days_to_close: days(ts('01-05T00:00'), ts('03-01T08:00')),
        }),
      ]);
    });

    it('rpt_sync_health and the headline figures', async () => {
      await databaseOf(store)
        .insertInto('sync_state')
        .values({ key: 'watermark', value_json: JSON.stringify('2024-03-05T23:59:00.000Z'), updated_at: null })
        .execute();
      await databaseOf(store)
        .insertInto('sync_runs')
        .values([
          {
            kind: 'sync',
            started_at: S('2024-03-05T23:58:00.000Z'),
            finished_at: S('2024-03-05T23:59:30.000Z'),
            outcome: 'success',
            events_read: 1,
            events_new: 1,
            records_fetched: 1,
            requests: 1,
            retries: 0,
            error: null,
          },
          {
            kind: 'sync',
            started_at: S('2024-03-05T23:59:40.000Z'),
            finished_at: S('2024-03-05T23:59:50.000Z'),
            outcome: 'failed',
            events_read: 0,
            events_new: 0,
            records_fetched: 0,
            requests: 1,
            retries: 0,
            error: 'x',
          },
          // Killed before it finished (or still running): not the last run's outcome, but running_since.
          {
            kind: 'sync',
            started_at: S('2024-03-05T23:59:55.000Z'),
            finished_at: null,
            outcome: 'running',
            events_read: 0,
            events_new: 0,
            records_fetched: 0,
            requests: 0,
            retries: 0,
            error: null,
          },
          {
            kind: 'backfill',
            started_at: S('2024-03-01T00:00:00.000Z'),
            finished_at: S('2024-03-01T00:10:00.000Z'),
            outcome: 'success',
            events_read: 0,
            events_new: 0,
            records_fetched: 9,
            requests: 9,
            retries: 0,
            error: null,
          },
        ])
        .execute();
      await databaseOf(store)
        .insertInto('dirty')
        .values({ entity_type: 'ticket', entity_id: 'T9', occurred_at: S(NOW.toISOString()), marked_at: null })
        .execute();
      const r = await refreshRptTables(store, { tickets: new Set(), deals: new Set() }, { now: NOW });
      expect(Object.keys(r.steps)).toEqual(['sync_health']);
      expect(await rows(store, 'SELECT * FROM rpt_sync_health')).toEqual([
        {
          refreshed_at: NOW.toISOString(),
          watermark: '2024-03-05T23:59:00.000Z',
          last_success_at: '2024-03-05T23:59:30.000Z',
          last_run_outcome: 'failed',
          lag_seconds: 30,
          watermark_age_seconds: 60,
          runs_24h: 3,
          failed_runs_24h: 1,
          dirty_records: 1,
          quarantined_records: 0,
          running_since: '2024-03-05T23:59:55.000Z',
          // No cycle has recorded a "current as of" in this hand-written mirror (test/freshness covers it).
          current_as_of: null,
          current_as_of_age_seconds: null,
        },
      ]);

      const h = await readHeadlines(store, new Date('2024-03-06T12:00:00.000Z'));
      expect(h.backlog).toBe(1);
      expect(h.last7Days).toMatchObject({
        from: '2024-02-29',
        to: '2024-03-06',
        created: 4,
        solved: 4,
        firstReplies: 4,
        slaAchieved: 3,
        slaBreached: 3,
        slaAchievementRate: 0.5,
      });
      // first replies 30, 60, 60, 150 → percentile_cont
      expect(h.last7Days.firstReplyMedianMinutes).toBe(60);
      expect(h.last7Days.firstReplyP90Minutes).toBe(60 + (150 - 60) * (3 * 0.9 - 2));
      expect(h.openPipeline).toEqual([
        { currency: 'EUR', deals: 1, amount: '250.25', amountCents: 25025 },
        { currency: 'USD', deals: 1, amount: '0.00', amountCents: 0 },
      ]);
      expect(h.quarter).toEqual({ label: '2024-Q1', from: '2024-01-01', to: '2024-03-31', won: 2, lost: 1, winRate: 2 / 3 });
    });

    it('every rpt_ column has a declared type', async () => {
      for (const table of RPT_TABLE_NAMES) {
        if (dialect.name === 'postgres') {
          const cols = (
            await sql<{ name: string; type: string }>`SELECT column_name AS name, data_type AS type FROM information_schema.columns
          WHERE table_schema = current_schema() AND table_name = ${table}`.execute(databaseOf(store))
          ).rows;
          expect(cols.length, table).toBeGreaterThan(0);
          for (const c of cols)
            expect(c.type, `${table}.${c.name}`).toMatch(/^(text|bigint|double precision|numeric|boolean|timestamp with time zone|date)$/);
          continue;
        }
        const info = (
          await sql<{ name: string; type: string }>`SELECT name, type FROM pragma_table_info(${table})`.execute(databaseOf(store))
        ).rows;
        expect(info.length, table).toBeGreaterThan(0);
        for (const c of info) expect(c.type, `${table}.${c.name}`).toMatch(/^(TEXT|INTEGER|REAL|BOOLEAN|DATETIME|DATE)$/i);
      }
    });

    it('incremental deal refresh equals a full rebuild', async () => {
      await databaseOf(store)
        .updateTable('deals')
        .set({ stage_id: 's3', status: 'won', updated_at: ts('03-05T18:00') })
        .where('id', '=', 'DL3')
        .execute();
      await databaseOf(store)
        .insertInto('deal_history')
        .values({
          deal_id: 'DL3',
          field: 'stage_id',
          from_value: 's2',
          to_value: 's3',
          changed_at: ts('03-05T18:00'),
          source: 'observed',
          event_id: null,
          observed_since: null,
        })
        .execute();
      await databaseOf(store)
        .updateTable('deals')
        .set({ deleted_at: ts('03-05T19:00') })
        .where('id', '=', 'DL6')
        .execute();
      await refreshRptTables(store, { tickets: new Set(), deals: new Set(['DL3', 'DL6']) }, { now: NOW });
      const tables = ['rpt_deals', 'rpt_deal_stage_intervals', 'rpt_pipeline_stages', 'rpt_sales_monthly'];
      const incremental = await snapshot(store, tables);
      await refreshRptTables(store, { tickets: 'all', deals: 'all' }, { now: NOW });
      expect(incremental).toEqual(await snapshot(store, tables));
      expect(await rows(store, "SELECT won_at, days_to_close FROM rpt_deals WHERE deal_id = 'DL3'")).toEqual([
        { won_at: ts('03-05T18:00'), days_to_close: days(ts('03-01T12:00'), ts('03-05T18:00')) },
      ]);
    });
  });
