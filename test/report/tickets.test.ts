import { describe, expect, it } from 'vitest';
import { readHeadlines, refreshRptTables } from '../../src/report/index.js';
import { dialects } from '../helpers/dialects.js';
import { minutes, percentileCont, rows } from './oracle.js';
import { NOW } from './scenario.js';
import { useScenarioStore } from './stores.js';
import { databaseOf } from '../../src/store/internal.js';

const d = (day: number, hm: string) => `2024-03-0${day}T${hm}:00.000Z`;

for (const dialect of dialects)
  describe(`support reporting tables (hand-written mirror) (${dialect.name})`, () => {
    const store = useScenarioStore(dialect);

    it('rpt_tickets: durations, counts, reopens, one-touch, SLA, completeness', async () => {
      const r = Object.fromEntries((await rows(store, 'SELECT * FROM rpt_tickets')).map((x) => [x.ticket_id, x]));
      expect(Object.keys(r).sort()).toEqual(['T1', 'T2', 'T3', 'T5']);
      expect(r.T1).toMatchObject({
        status: 'closed',
        is_resolved: 1,
        tags: 'a,b',
        assignee_name: 'Una One',
        requester_name: 'Ada Lovelace',
        first_reply_minutes: 60,
        first_resolved_at: d(1, '12:00'),
        full_resolved_at: d(1, '12:00'),
        resolved_from_history: 1,
        first_resolution_minutes: 180,
        full_resolution_minutes: 180,
        reopen_count: 0,
        public_agent_replies: 1,
        internal_notes: 0,
        customer_messages: 1,
        is_one_touch: 1,
        first_reply_sla: 'achieved',
        first_reply_sla_at: d(1, '10:00'),
        resolve_sla: 'achieved',
        resolve_sla_at: d(1, '12:00'),
        age_minutes: null,
        history_complete: 1,
      });
      expect(r.T2).toMatchObject({
        first_reply_minutes: 150,
        first_resolution_minutes: minutes(d(1, '08:00'), d(2, '09:00')),
        full_resolution_minutes: minutes(d(1, '08:00'), d(3, '10:00')),
        reopen_count: 1,
        public_agent_replies: 2,
        internal_notes: 1,
        customer_messages: 2,
        is_one_touch: 0,
        first_reply_sla: 'breached',
        first_reply_sla_at: d(1, '09:00'),
        resolve_sla: 'breached',
        resolve_sla_at: d(2, '08:00'),
        requester_email: 'bob@example.com',
      });
      expect(r.T3).toMatchObject({
        is_resolved: 0,
        first_reply_minutes: 30,
        first_resolved_at: null,
        reopen_count: 0,
        first_reply_sla: 'achieved',
        resolve_sla: 'breached',
        resolve_sla_at: d(4, '11:00'),
        age_minutes: Math.trunc(minutes(d(2, '11:00'), NOW.toISOString())),
        history_complete: 0,
        assignee_id: null,
      });
      expect(r.T5).toMatchObject({
        first_resolved_at: d(3, '18:00'),
        full_resolved_at: d(3, '18:00'),
        resolved_from_history: 0,
        is_one_touch: 1,
        first_reply_sla: 'none',
        resolve_sla: 'none',
        history_complete: 0,
      });
    });

    it('rpt_ticket_status_intervals: stays from created_at, reopen and resolution marks, assignee at the time', async () => {
      const iv = await rows(
        store,
        `SELECT ticket_id, seq, status, valid_from, valid_to, minutes, is_resolution, is_reopen, assignee_id, source
      FROM rpt_ticket_status_intervals ORDER BY ticket_id, seq`,
      );
      const t2 = iv
        .filter((x) => x.ticket_id === 'T2')
        .map((x) => [x.status, x.valid_from, x.valid_to, x.minutes, x.is_resolution, x.is_reopen, x.assignee_id, x.source]);
      expect(t2).toEqual([
        ['open', d(1, '08:00'), d(1, '10:30'), 150, 0, 0, 'u2', 'created'],
        ['pending', d(1, '10:30'), d(2, '09:00'), minutes(d(1, '10:30'), d(2, '09:00')), 0, 0, 'u2', 'event'],
        ['solved', d(2, '09:00'), d(2, '15:00'), 360, 1, 0, 'u2', 'observed'],
        ['open', d(2, '15:00'), d(3, '10:00'), minutes(d(2, '15:00'), d(3, '10:00')), 0, 1, 'u2', 'event'],
        ['solved', d(3, '10:00'), null, null, 1, 0, 'u2', 'event'],
      ]);
      const t1 = iv.filter((x) => x.ticket_id === 'T1').map((x) => [x.status, x.assignee_id]);
      expect(t1).toEqual([
        ['open', null],
        ['pending', 'u1'],
        ['solved', 'u1'],
        ['closed', 'u1'],
      ]);
      expect(iv.filter((x) => x.ticket_id === 'T3').map((x) => [x.status, x.valid_from, x.valid_to])).toEqual([
        ['pending', d(2, '11:00'), null],
      ]);
      expect(iv.some((x) => x.ticket_id === 'T4')).toBe(false);
    });

    it('rpt_support_daily: one row per day, backlog, percentiles, SLA', async () => {
      const daily = await rows(store, 'SELECT * FROM rpt_support_daily ORDER BY day');
      expect(daily.map((x) => x.day)).toEqual(['2024-03-01', '2024-03-02', '2024-03-03', '2024-03-04', '2024-03-05', '2024-03-06']);
      const col = (c: string) => daily.map((x) => x[c]);
      expect(col('created')).toEqual([2, 1, 1, 0, 0, 0]);
      expect(col('solved')).toEqual([1, 1, 2, 0, 0, 0]);
      expect(col('reopened')).toEqual([0, 1, 0, 0, 0, 0]);
      expect(col('backlog')).toEqual([1, 2, 1, 1, 1, 1]);
      expect(col('first_replies')).toEqual([2, 1, 1, 0, 0, 0]);
      expect(col('first_reply_median_minutes')).toEqual([percentileCont([60, 150], 0.5), 30, 60, null, null, null]);
      expect(col('first_reply_p90_minutes')).toEqual([percentileCont([60, 150], 0.9), 30, 60, null, null, null]);
      expect(col('first_reply_sla_achieved')).toEqual([1, 1, 0, 0, 0, 0]);
      expect(col('first_reply_sla_breached')).toEqual([1, 0, 0, 0, 0, 0]);
      expect(col('resolve_sla_achieved')).toEqual([1, 0, 0, 0, 0, 0]);
      expect(col('resolve_sla_breached')).toEqual([0, 1, 0, 1, 0, 0]);
      expect(col('sla_achieved')).toEqual([2, 1, 0, 0, 0, 0]);
      expect(col('sla_breached')).toEqual([1, 1, 0, 1, 0, 0]);
    });

    it('rpt_agent_daily: replies, notes, touches, solves while assigned, one-touch solves', async () => {
      const a = await rows(
        store,
        `SELECT agent_id, agent_name, day, public_replies, internal_notes, tickets_touched, tickets_solved, one_touch_solves
      FROM rpt_agent_daily ORDER BY agent_id, day`,
      );
      expect(
        a.map((x) => [x.agent_id, x.day, x.public_replies, x.internal_notes, x.tickets_touched, x.tickets_solved, x.one_touch_solves]),
      ).toEqual([
        ['u1', '2024-03-01', 1, 0, 1, 1, 1],
        ['u1', '2024-03-03', 1, 0, 1, 1, 1],
        ['u2', '2024-03-01', 1, 0, 1, 0, 0],
        ['u2', '2024-03-02', 0, 1, 1, 1, 0],
        ['u2', '2024-03-03', 1, 0, 1, 1, 0],
        ['u3', '2024-03-02', 1, 0, 1, 0, 0],
      ]);
      expect(a[0].agent_name).toBe('Una One');
    });

    it('incremental refresh of changed ids equals a full rebuild, and deletions leave', async () => {
      const db = databaseOf(store);
      await db
        .updateTable('tickets')
        .set({ status: 'open', updated_at: d(5, '10:00'), resolved_at: null })
        .where('id', '=', 'T5')
        .execute();
      await db
        .insertInto('ticket_history')
        .values({
          ticket_id: 'T5',
          field: 'status',
          from_value: 'solved',
          to_value: 'open',
          changed_at: d(5, '10:00'),
          source: 'observed',
          event_id: null,
          observed_since: d(3, '18:00'),
        })
        .execute();
      await db
        .updateTable('tickets')
        .set({ deleted_at: d(5, '11:00') })
        .where('id', '=', 'T3')
        .execute();
      await refreshRptTables(store, { tickets: new Set(['T5', 'T3']), deals: new Set() }, { now: NOW });
      const { snapshot } = await import('./oracle.js');
      const tables = ['rpt_tickets', 'rpt_ticket_status_intervals', 'rpt_support_daily', 'rpt_agent_daily'];
      const incremental = await snapshot(store, tables);
      await refreshRptTables(store, { tickets: 'all', deals: 'all' }, { now: NOW });
      expect(incremental).toEqual(await snapshot(store, tables));
      const t5 = await rows(store, "SELECT reopen_count, is_resolved FROM rpt_tickets WHERE ticket_id = 'T5'");
      expect(t5).toEqual([{ reopen_count: 1, is_resolved: 0 }]);
      expect(await rows(store, "SELECT count(*) AS n FROM rpt_tickets WHERE ticket_id = 'T3'")).toEqual([{ n: 0 }]);
    });

    it('the clock step rewrites a ticket row only when its whole-minute age moves', async () => {
      const at = (ms: number) => new Date(NOW.getTime() + ms);
      const t3 = () => rows(store, "SELECT age_minutes, refreshed_at FROM rpt_tickets WHERE ticket_id = 'T3'");
      const age = (now: Date) => Math.trunc(minutes(d(2, '11:00'), now.toISOString()));
      expect(await t3()).toEqual([{ age_minutes: age(NOW), refreshed_at: NOW.toISOString() }]);
      // A deal changed, no ticket did: the ticket rows move by the clock step alone.
      await refreshRptTables(store, { tickets: new Set(), deals: new Set(['DL3']) }, { now: at(59_999) });
      expect(age(at(59_999))).toBe(age(NOW));
      expect(await t3()).toEqual([{ age_minutes: age(NOW), refreshed_at: NOW.toISOString() }]);
      // Figures as of the last refresh, not of the newest ticket row.
      expect((await readHeadlines(store, at(59_999))).refreshedAt).toBe(at(59_999).toISOString());
      await refreshRptTables(store, { tickets: new Set(), deals: new Set(['DL3']) }, { now: at(60_000) });
      expect(await t3()).toEqual([{ age_minutes: age(NOW) + 1, refreshed_at: at(60_000).toISOString() }]);
      // T1, T2 and T5 are resolved: no age.
      expect(await rows(store, "SELECT count(*) AS n FROM rpt_tickets WHERE ticket_id <> 'T3' AND age_minutes IS NOT NULL")).toEqual([
        { n: 0 },
      ]);
    });
  });
