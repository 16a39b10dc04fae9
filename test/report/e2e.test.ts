/* eslint-disable @typescript-eslint/no-explicit-any */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refreshRptTables } from '../../src/report/index.js';
import { SIMULATOR_DIALECTS } from '../../src/simulator/index.js';
import { dialects } from '../helpers/dialects.js';
import { upstreamDialects } from '../helpers/upstream.js';
import { callApi, harness, type Harness } from '../sync/harness.js';
import { rows } from './oracle.js';
import { unreadableRecords } from '../helpers/truth-history.js';
import { figures, incompleteReasons, WORKSPACE_TABLES } from './figures.js';

const HOUR = 3_600_000;

/**
 * Issue 4 acceptance: a scripted workspace built through the simulator's public HTTP API and its
 * control clock, synced into a mirror after every step, refreshed, and every rpt_ table compared
 * with figures computed independently from the simulator's ground truth, under each upstream
 * dialect the run names (test/helpers/upstream.ts).
 */
for (const upstream of upstreamDialects())
  for (const dialect of dialects)
    describe(`reporting tables against the simulator ground truth (${dialect.name}, upstream ${upstream})`, () => {
      let h: Harness;
      let now: string;
      const ids: Record<string, string> = {};

      const api = (method: string, path: string, body?: unknown) => callApi(h.sim, method, path, body);
      const step = async (ms: number) => {
        await h.sync();
        h.sim.control.advanceClock(ms);
      };

      beforeAll(async () => {
        h = await harness({
          sim: { tickets: 0, deals: 0, startTime: new Date('2024-02-28T08:00:00.000Z'), dialect: SIMULATOR_DIALECTS[upstream] },
          dialect,
        });
        await h.backfill();
        const members = (h.sim.control.truth().members as any[]).map((m) => m.id as string);
        const pipeline = (h.sim.control.truth().pipelines as any[])[0];
        const open = pipeline.stages.filter((s: any) => !s.isWon && !s.isLost);
        const won = pipeline.stages.find((s: any) => s.isWon).id;
        const lost = pipeline.stages.find((s: any) => s.isLost).id;

        // A: one-touch. Reply (auto-assigns the API user, goes pending), then solved.
        ids.A = (await api('POST', '/tickets', { subject: 'A', body: 'help', email: 'a@example.com', tags: ['vip', 'billing'] })).ticket.id;
        await step(HOUR / 2);
        await api('POST', `/tickets/${ids.A}/messages`, { body: 'done' });
        await step(HOUR);
        await api('PATCH', `/tickets/${ids.A}`, { status: 'solved' });
        // B: assigned, replied, noted, solved, reopened, solved again with a second reply.
        ids.B = (await api('POST', '/tickets', { subject: 'B', body: 'broken', email: 'b@example.com', assigneeId: members[1] })).ticket.id;
        await step(2 * HOUR);
        await api('POST', `/tickets/${ids.B}/messages`, { body: 'try this' });
        await step(HOUR);
        await api('POST', `/tickets/${ids.B}/messages`, { body: 'note', internal: true });
        await step(HOUR);
        await api('PATCH', `/tickets/${ids.B}`, { status: 'solved' });
        await step(3 * HOUR);
        await api('PATCH', `/tickets/${ids.B}`, { status: 'open' });
        await step(HOUR);
        await api('POST', `/tickets/${ids.B}/messages`, { body: 'fixed now', status: 'solved' });
        // C: urgent (first reply due in 1 h), answered after 2 h: a first-reply breach.
        ids.C = (await api('POST', '/tickets', { subject: 'C', body: 'down!', email: 'c@example.com', priority: 'urgent' })).ticket.id;
        await step(2 * HOUR);
        await api('POST', `/tickets/${ids.C}/messages`, { body: 'looking' });
        // D: stays open with an internal note only.
        ids.D = (await api('POST', '/tickets', { subject: 'D', body: 'question', email: 'd@example.com' })).ticket.id;
        await step(HOUR);
        await api('POST', `/tickets/${ids.D}/messages`, { body: 'note', internal: true });

        // Deals in February: one won (EUR), one created (USD, lost in March).
        ids.d1 = (
          await api('POST', '/deals', { name: 'd1', amount: '1000.00', currency: 'EUR', ownerId: members[0], pipelineId: pipeline.id })
        ).deal.id;
        await step(HOUR);
        await api('PATCH', `/deals/${ids.d1}`, { stage: open[1].id });
        await step(HOUR);
        await api('PATCH', `/deals/${ids.d1}`, { stage: won });
        ids.d2 = (
          await api('POST', '/deals', { name: 'd2', amount: 250.5, currency: 'USD', ownerId: members[1], pipelineId: pipeline.id })
        ).deal.id;
        await step(2 * 24 * HOUR); // into March
        await api('PATCH', `/deals/${ids.d2}`, { stage: lost });
        ids.d3 = (
          await api('POST', '/deals', { name: 'd3', amount: '75.25', currency: 'EUR', ownerId: members[1], pipelineId: pipeline.id })
        ).deal.id;
        await step(HOUR);
        await api('PATCH', `/deals/${ids.d3}`, { stage: open[2].id });
        await step(HOUR);
        await api('PATCH', `/deals/${ids.d3}`, { stage: open[1].id });
        ids.d4 = (
          await api('POST', '/deals', { name: 'd4', amount: '20.00', currency: 'USD', ownerId: members[0], pipelineId: pipeline.id })
        ).deal.id;
        await step(HOUR);
        await api('PATCH', `/deals/${ids.d4}`, { stage: won });
        await step(5 * 24 * HOUR); // the auto-close automation closes A and B
        await h.sync();
        expect(await h.diff()).toEqual([]);
        now = h.sim.control.now().toISOString();
        await refreshRptTables(h.store, { tickets: 'all', deals: 'all' }, { now: new Date(now) });
      }, 120_000);
      afterAll(async () => {
        await h?.close();
      });

      it('the script produced the known cases', async () => {
        const r = Object.fromEntries((await rows(h.store, 'SELECT * FROM rpt_tickets')).map((x) => [x.ticket_id, x]));
        expect(r[ids.A!]).toMatchObject({
          is_one_touch: 1,
          reopen_count: 0,
          status: 'closed',
          first_reply_sla: 'achieved',
          tags: 'billing,vip',
        });
        expect(r[ids.B!]).toMatchObject({ reopen_count: 1, public_agent_replies: 2, internal_notes: 1, is_one_touch: 0, status: 'closed' });
        expect(r[ids.C!]).toMatchObject({ first_reply_sla: 'breached' });
        expect(r[ids.C!].first_reply_minutes).toBeGreaterThanOrEqual(120); // the simulated clock also runs in real time
        expect(r[ids.D!]).toMatchObject({ is_resolved: 0, first_reply_sla: 'breached' });
        const d = Object.fromEntries((await rows(h.store, 'SELECT * FROM rpt_deals')).map((x) => [x.deal_id, x]));
        expect([d[ids.d1!].status, d[ids.d2!].status, d[ids.d3!].status, d[ids.d4!].status]).toEqual(['won', 'lost', 'open', 'won']);
        expect(d[ids.d1!].won_at.slice(0, 7)).toBe('2024-02');
        expect(d[ids.d2!].lost_at.slice(0, 7)).toBe('2024-03');
      });

      it('every workspace rpt_ table equals the truth, never mixing currencies', async () => {
        const { mirror, truth } = await figures(h.store, h.sim.control.truth(), now);
        for (const table of WORKSPACE_TABLES) expect(mirror[table], table).toEqual(truth[table]);
        const sm = await rows(h.store, 'SELECT month FROM rpt_sales_monthly');
        expect(new Set(sm.map((r: any) => r.month))).toEqual(new Set(['2024-02-01', '2024-03-01']));
      });

      it('exactly the records whose changes the log hides are incomplete', async () => {
        expect([...(await incompleteReasons(h.store)).keys()].sort()).toEqual([...unreadableRecords(h.sim.control.truth()).keys()].sort());
      });

      it('rpt_sync_health reflects the runs and the watermark', async () => {
        const [health] = await rows(h.store, 'SELECT * FROM rpt_sync_health');
        const newest = (h.sim.control.truth().events as any[])[0].occurredAt;
        expect(health).toMatchObject({ watermark: newest, dirty_records: 0, quarantined_records: 0, refreshed_at: now });
      });
    });
