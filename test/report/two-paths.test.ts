/* eslint-disable @typescript-eslint/no-explicit-any */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refreshRptTables } from '../../src/report/index.js';
import { openStore, type Store } from '../../src/store/index.js';
import { recordRun, runBackfill, type SyncContext } from '../../src/sync/index.js';
import { dialects } from '../helpers/dialects.js';
import { diffMirror } from '../helpers/truth.js';
import { callApi, harness, type Harness } from '../sync/harness.js';
import { rows, snapshot } from './oracle.js';
import { agentDaily, dealFigures, salesAggregates, supportDaily, ticketFigures } from './truth-oracle.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** Every rpt_ table that describes the workspace; rpt_sync_health describes each mirror's own runs. */
const WORKSPACE_TABLES = [
  'rpt_tickets',
  'rpt_ticket_status_intervals',
  'rpt_support_daily',
  'rpt_agent_daily',
  'rpt_deals',
  'rpt_deal_stage_intervals',
  'rpt_pipeline_stages',
  'rpt_sales_monthly',
];

/**
 * Issue 7 acceptance, "same life, two paths, same figures": one workspace life scripted through
 * the simulator's HTTP API and clock is mirrored live, by a sync after most steps (some steps
 * change one record several times between two syncs), and again after the fact by
 * `backfill --history all`. Both mirrors' rpt_ tables must be equal to each other and to the
 * figures computed from the simulator's ground truth (truth-oracle.ts).
 */
for (const dialect of dialects)
  describe(`same life, two paths, same figures (${dialect.name})`, () => {
    let h: Harness;
    let imported: Store;
    let dropImported: () => Promise<void>;
    let now: string;
    const ids: Record<string, string> = {};

    const api = (method: string, path: string, body?: unknown) => callApi(h.sim, method, path, body);
    const wait = (ms: number) => h.sim.control.advanceClock(ms);
    const step = async (ms: number) => {
      await h.sync();
      wait(ms);
    };

    beforeAll(async () => {
      // One seeded ticket, so a team id is known to move a ticket between teams; the live mirror
      // imports its past too, so both mirrors hold its whole life.
      h = await harness({ sim: { tickets: 1, deals: 0, startTime: new Date('2024-02-26T08:00:00.000Z') }, dialect });
      await recordRun(h.ctx, 'backfill', (s) => runBackfill(h.ctx, s, { history: 'all' }));
      const truth0 = h.sim.control.truth();
      const teams = [...new Set((truth0.tickets as any[]).map((t) => t.team?.id).filter(Boolean))] as string[];
      expect(teams.length).toBeGreaterThan(0);
      const members = (truth0.members as any[]).map((m) => m.id as string);
      const [p1, p2] = truth0.pipelines as any[];
      const openOf = (p: any) => p.stages.filter((s: any) => !s.isWon && !s.isLost);
      const wonOf = (p: any) => p.stages.find((s: any) => s.isWon).id;
      const lostOf = (p: any) => p.stages.find((s: any) => s.isLost).id;

      // Tickets. A: replied, noted, solved, reassigned after the solve, reopened, solved again.
      ids.A = (await api('POST', '/tickets', { subject: 'A', body: 'help', email: 'a@example.com', assigneeId: members[0] })).ticket.id;
      await step(HOUR);
      await api('POST', `/tickets/${ids.A}/messages`, { body: 'try this' });
      await step(HOUR);
      await api('POST', `/tickets/${ids.A}/messages`, { body: 'internal', internal: true });
      await step(2 * HOUR);
      await api('PATCH', `/tickets/${ids.A}`, { status: 'solved' });
      await step(3 * HOUR);
      await api('PATCH', `/tickets/${ids.A}`, { assigneeId: members[1] });
      await step(DAY);
      await api('PATCH', `/tickets/${ids.A}`, { status: 'open' });
      await step(HOUR);
      await api('POST', `/tickets/${ids.A}/messages`, { body: 'fixed', status: 'solved' });
      // B: priority raised, then several changes between two syncs (reply, reassign, solve).
      ids.B = (await api('POST', '/tickets', { subject: 'B', body: 'slow', email: 'b@example.com' })).ticket.id;
      await step(2 * HOUR);
      await api('PATCH', `/tickets/${ids.B}`, { priority: 'high', teamId: teams[0] });
      await step(HOUR);
      await api('POST', `/tickets/${ids.B}/messages`, { body: 'looking' });
      wait(30 * 60_000);
      await api('PATCH', `/tickets/${ids.B}`, { assigneeId: members[2] ?? members[0] });
      wait(30 * 60_000);
      await api('PATCH', `/tickets/${ids.B}`, { status: 'solved' });
      await step(2 * DAY); // into March
      // C: stays open with a priority change and a note.
      ids.C = (await api('POST', '/tickets', { subject: 'C', body: 'question', email: 'c@example.com', priority: 'low' })).ticket.id;
      await step(HOUR);
      await api('PATCH', `/tickets/${ids.C}`, { priority: 'urgent' });
      await step(HOUR);
      await api('POST', `/tickets/${ids.C}/messages`, { body: 'note', internal: true });

      // Deals in two pipelines and currencies. d1 (EUR, p1): forward, back, forward, won in March.
      ids.d1 = (
        await api('POST', '/deals', { name: 'd1', amount: '1000.00', currency: 'EUR', ownerId: members[0], pipelineId: p1.id })
      ).deal.id;
      await step(HOUR);
      await api('PATCH', `/deals/${ids.d1}`, { stage: openOf(p1)[2].id });
      await step(DAY);
      await api('PATCH', `/deals/${ids.d1}`, { stage: openOf(p1)[1].id });
      await step(DAY);
      await api('PATCH', `/deals/${ids.d1}`, { stage: wonOf(p1) });
      // d2 (USD, p2), a null amount: several changes inside one cycle, then lost in April.
      ids.d2 = (await api('POST', '/deals', { name: 'd2', amount: null, currency: 'USD', ownerId: members[1], pipelineId: p2.id })).deal.id;
      await step(HOUR);
      await api('PATCH', `/deals/${ids.d2}`, { stage: openOf(p2)[1].id });
      wait(10 * 60_000);
      await api('PATCH', `/deals/${ids.d2}`, { amount: '250.50', closeDate: '2024-04-30' });
      wait(10 * 60_000);
      await api('PATCH', `/deals/${ids.d2}`, { stage: openOf(p2)[0].id, ownerId: members[0] });
      wait(10 * 60_000);
      await api('PATCH', `/deals/${ids.d2}`, { amount: null });
      await step(30 * DAY); // into April
      await api('PATCH', `/deals/${ids.d2}`, { stage: lostOf(p2) });
      // d3 (EUR, p2): won the same day it is created, amount changed after.
      ids.d3 = (
        await api('POST', '/deals', { name: 'd3', amount: '75.25', currency: 'EUR', ownerId: members[1], pipelineId: p2.id })
      ).deal.id;
      await step(HOUR);
      await api('PATCH', `/deals/${ids.d3}`, { stage: wonOf(p2) });
      await step(HOUR);
      await api('PATCH', `/deals/${ids.d3}`, { amount: '80.00' });
      // d4 (USD, p1): stays open, moved twice in one cycle.
      ids.d4 = (
        await api('POST', '/deals', { name: 'd4', amount: '20.00', currency: 'USD', ownerId: members[0], pipelineId: p1.id })
      ).deal.id;
      await step(HOUR);
      await api('PATCH', `/deals/${ids.d4}`, { stage: openOf(p1)[1].id });
      wait(5 * 60_000);
      await api('PATCH', `/deals/${ids.d4}`, { stage: openOf(p1)[2].id });
      await step(HOUR);
      await h.sync();
      expect(await h.diff()).toEqual([]);

      // The same life imported after the fact.
      const target = await dialect.newDatabase();
      dropImported = target.drop;
      imported = await openStore({ database: target.database });
      await imported.migrate();
      const ctx: SyncContext = { ...h.ctx, store: imported };
      await recordRun(ctx, 'backfill', (s) => runBackfill(ctx, s, { history: 'all' }));
      expect(await diffMirror(imported.db, h.sim.control.truth())).toEqual([]);

      now = h.sim.control.now().toISOString();
      await refreshRptTables(h.store, { tickets: 'all', deals: 'all' }, { now: new Date(now) });
      await refreshRptTables(imported, { tickets: 'all', deals: 'all' }, { now: new Date(now) });
    }, 180_000);
    afterAll(async () => {
      await imported?.close();
      await dropImported?.();
      await h?.close();
    });

    const pick = (list: any[], keys: string[]) => list.map((r) => Object.fromEntries(keys.map((k) => [k, r[k]])));

    it('the live mirror and the imported one hold the same figures in every rpt_ table', async () => {
      const live = await snapshot(h.store, WORKSPACE_TABLES);
      const past = await snapshot(imported, WORKSPACE_TABLES);
      for (const t of WORKSPACE_TABLES) expect(past[t], t).toEqual(live[t]);
      // The script's cases are really in there.
      const d = Object.fromEntries((await rows(imported, 'SELECT * FROM rpt_deals')).map((x) => [x.deal_id, x]));
      expect([d[ids.d1!].status, d[ids.d2!].status, d[ids.d3!].status, d[ids.d4!].status]).toEqual(['won', 'lost', 'won', 'open']);
      expect(d[ids.d1!].won_at.slice(0, 7)).toBe('2024-03');
      expect(d[ids.d2!].lost_at.slice(0, 7)).toBe('2024-04');
      expect(d[ids.d2!].amount_cents).toBeNull();
      expect(d[ids.d1!].days_to_close).toBeGreaterThan(2);
      const t = Object.fromEntries((await rows(imported, 'SELECT * FROM rpt_tickets')).map((x) => [x.ticket_id, x]));
      expect(t[ids.A!]).toMatchObject({ reopen_count: 1, history_complete: 1 });
    });

    it('the history of both mirrors is the change log: same rows, event times, nothing only observed', async () => {
      const q = `SELECT ticket_id AS id, field, from_value, to_value, changed_at, source FROM ticket_history
      UNION ALL SELECT deal_id, field, from_value, to_value, changed_at, source FROM deal_history`;
      const key = (r: any) => JSON.stringify([r.id, r.field, r.from_value, r.to_value, r.changed_at, r.source]);
      const live = (await rows(h.store, q)).map(key).sort();
      const past = (await rows(imported, q)).map(key).sort();
      expect(past).toEqual(live);
      expect(live.filter((k) => k.includes('"observed"'))).toEqual([]);
      const fields = new Set((await rows(h.store, q)).map((r: any) => r.field));
      expect(fields).toEqual(new Set(['status', 'priority', 'assignee_id', 'team_id', 'stage_id', 'amount', 'close_date', 'owner_id']));
    });

    for (const [name, mirror] of [
      ['live', () => h.store],
      ['imported', () => imported],
    ] as const) {
      it(`the ${name} mirror equals the figures computed from the ground truth`, async () => {
        const store = mirror();
        const truth = h.sim.control.truth();
        const tf = ticketFigures(truth, now);
        const tKeys = Object.keys(tf.tickets[0]!).filter((k) => !k.startsWith('_'));
        expect(pick(await rows(store, 'SELECT * FROM rpt_tickets ORDER BY ticket_id'), tKeys)).toEqual(
          pick(
            [...tf.tickets].sort((a, b) => (a.ticket_id < b.ticket_id ? -1 : 1)),
            tKeys,
          ),
        );
        const iKeys = Object.keys(tf.intervals[0]!);
        expect(pick(await rows(store, 'SELECT * FROM rpt_ticket_status_intervals ORDER BY ticket_id, seq'), iKeys)).toEqual(
          pick(
            [...tf.intervals].sort((a, b) => (a.ticket_id + a.seq < b.ticket_id + b.seq ? -1 : 1)),
            iKeys,
          ),
        );
        expect(await rows(store, 'SELECT * FROM rpt_support_daily ORDER BY day')).toEqual(supportDaily(truth, now));
        const ad = agentDaily(truth, now);
        expect(pick(await rows(store, 'SELECT * FROM rpt_agent_daily ORDER BY agent_id, day'), Object.keys(ad[0]!))).toEqual(ad);

        const df = dealFigures(truth, now);
        const dKeys = Object.keys(df.deals[0]!).filter((k) => !k.startsWith('_'));
        expect(pick(await rows(store, 'SELECT * FROM rpt_deals ORDER BY deal_id'), dKeys)).toEqual(
          pick(
            [...df.deals].sort((a, b) => (a.deal_id < b.deal_id ? -1 : 1)),
            dKeys,
          ),
        );
        const dvKeys = Object.keys(df.intervals[0]!);
        expect(pick(await rows(store, 'SELECT * FROM rpt_deal_stage_intervals ORDER BY deal_id, seq'), dvKeys)).toEqual(
          pick(
            [...df.intervals].sort((a, b) => (a.deal_id + a.seq < b.deal_id + b.seq ? -1 : 1)),
            dvKeys,
          ),
        );
        const sa = salesAggregates(truth, now);
        const sortKey = (r: any) => JSON.stringify([r.month ?? '', r.pipeline_id, r.stage_id ?? '', r.owner_id ?? '', r.currency]);
        const sorted = (l: any[]) => [...l].sort((a, b) => (sortKey(a) < sortKey(b) ? -1 : 1));
        expect(sorted(pick(await rows(store, 'SELECT * FROM rpt_pipeline_stages'), Object.keys(sa.pipelineStages[0]!)))).toEqual(
          sorted(sa.pipelineStages),
        );
        const sm = await rows(store, 'SELECT * FROM rpt_sales_monthly');
        expect(sorted(pick(sm, Object.keys(sa.monthly[0]!)))).toEqual(sorted(sa.monthly));
        expect(new Set(sm.map((r: any) => r.month))).toEqual(new Set(['2024-02-01', '2024-03-01', '2024-04-01']));
      });
    }
  });
