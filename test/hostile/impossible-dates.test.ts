/* eslint-disable @typescript-eslint/no-explicit-any -- the simulator's truth, read as the wire body it is */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient } from '../../src/api/index.js';
import { emptyStats, readWatermark, recordRun, runBackfill, runSyncCycle, type SyncContext } from '../../src/sync/index.js';
import { dialects } from '../helpers/dialects.js';
import { diffMirror } from '../helpers/truth.js';
import { API_KEY, callApi, harness, type Harness } from '../sync/harness.js';
import { startHostile, type HostileUpstream } from './server.js';
import { databaseOf } from '../../src/store/internal.js';

/** The simulated clock starts on 1 July: 31 June rolled over by Date.parse would be today, not an error. */
const START = new Date('2024-07-01T12:00:00.000Z');
/** Real-looking times that name no real instant. */
const IMPOSSIBLE = ['2024-06-31T11:00:00Z', '2024-06-30T24:00:00Z', '2024-13-01T00:00:00Z', '2023-02-29T10:00:00Z', '2024-06-30T10:60:00Z'];

const TICKET_FIELDS: [string, (v: string, t: any) => Record<string, unknown>][] = [
  ...['createdAt', 'updatedAt', 'firstAgentReplyAt', 'resolvedAt', 'statusChangedAt'].map(
    (f) => [f, (v: string) => ({ [f]: v })] as [string, (v: string, t: any) => Record<string, unknown>],
  ),
  ...['firstReplyDueAt', 'resolveDueAt', 'firstReplyBreachedAt', 'resolveBreachedAt'].map(
    (f) =>
      [`sla.${f}`, (v: string, t: any) => ({ sla: { ...(t.sla ?? {}), [f]: v } })] as [
        string,
        (v: string, t: any) => Record<string, unknown>,
      ],
  ),
];
const MESSAGE_FIELD: [string, (v: string, t: any) => Record<string, unknown>] = [
  'messages.0.createdAt',
  (v, t) => ({ messages: t.messages.map((m: any, i: number) => (i === 0 ? { ...m, createdAt: v } : m)) }),
];
const DEAL_FIELDS: [string, (v: string) => Record<string, unknown>][] = [
  ['createdAt', (v) => ({ createdAt: v })],
  ['updatedAt', (v) => ({ updatedAt: v })],
  ['closeDate', (v) => ({ closeDate: v.slice(0, 10) })],
];

/**
 * Issue 26, strict values: an impossible date in any timestamp field of a ticket, a message or a
 * deal, on a read by id and on a list page, quarantines that record with a reason (its stored copy
 * kept) while the rest syncs; an event with an impossible time is quarantined and never moves the
 * watermark. The hostile proxy (server.ts) patches the fields in reads and list pages alike.
 */
for (const dialect of dialects)
  describe(`impossible dates (${dialect.name})`, () => {
    let h: Harness;
    let hostile: HostileUpstream;
    let client: ApiClient;
    let ctx: SyncContext;
    let edits = 0;

    beforeAll(async () => {
      h = await harness({ sim: { seed: 31, tickets: 16, deals: 8, startTime: START }, dialect });
      hostile = await startHostile(h.sim.url);
      client = createApiClient({
        baseUrl: hostile.url,
        apiKey: API_KEY,
        maxRequestsPerSecond: 5000,
        concurrency: 4,
        retry: { maxAttempts: 3, minDelayMs: 1, maxDelayMs: 20 },
        requestTimeoutMs: 5000,
      });
      ctx = { ...h.ctx, client };
      await recordRun(ctx, 'backfill', (s) => runBackfill(ctx, s));
    }, 60_000);
    afterAll(async () => {
      await client?.close();
      await hostile?.close();
      await h?.close();
    });

    const truth = () => h.sim.control.truth();
    const edit = async (kind: 'tickets' | 'deals', id: string) =>
      callApi(h.sim, 'PATCH', `/${kind}/${id}`, kind === 'tickets' ? { subject: `edit ${++edits}` } : { name: `edit ${++edits}` });
    const sync = async (drainPlan: 'record' | 'list') => {
      const stats = emptyStats();
      await runSyncCycle({ ...ctx, config: { ...ctx.config, drainPlan } }, stats);
      return stats;
    };
    const quarantined = async (type: string) =>
      new Map(
        (await databaseOf(h.store).selectFrom('quarantine').select(['entity_id', 'reason']).where('entity_type', '=', type).execute()).map(
          (q) => [q.entity_id, q.reason] as const,
        ),
      );
    const stored = async (table: 'tickets' | 'deals', id: string) =>
      (await databaseOf(h.store).selectFrom(table).select(['updated_at']).where('id', '=', id).executeTakeFirst())?.updated_at;

    for (const plan of ['record', 'list'] as const) {
      it(`on ${plan === 'record' ? 'reads by id' : 'list pages'}: each bad record is quarantined with the field named, the rest syncs`, async () => {
        const tickets = truth().tickets as any[];
        const deals = truth().deals as any[];
        const fields = plan === 'record' ? [...TICKET_FIELDS, MESSAGE_FIELD] : TICKET_FIELDS;
        const cases: { kind: 'tickets' | 'deals'; id: string; field: string }[] = [];
        hostile.faults.patchRecords = {};
        fields.forEach(([field, patch], i) => {
          const t = tickets.find((x) => x.messages.length > 0 && !cases.some((c) => c.id === x.id))!;
          hostile.faults.patchRecords![t.id] = patch(IMPOSSIBLE[i % IMPOSSIBLE.length]!, t);
          cases.push({ kind: 'tickets', id: t.id, field });
        });
        DEAL_FIELDS.forEach(([field, patch], i) => {
          const d = deals[i]!;
          hostile.faults.patchRecords![d.id] = patch(field === 'closeDate' ? '2023-02-29T00:00:00Z' : IMPOSSIBLE[i]!);
          cases.push({ kind: 'deals', id: d.id, field });
        });
        const bystanders: ['tickets' | 'deals', string][] = [
          ['tickets', tickets.find((t) => !cases.some((c) => c.id === t.id))!.id],
          ['deals', deals[DEAL_FIELDS.length]!.id],
        ];
        const before = new Map(await Promise.all(cases.map(async (c) => [c.id, await stored(c.kind, c.id)] as const)));
        for (const c of cases) await edit(c.kind, c.id);
        for (const [kind, id] of bystanders) await edit(kind, id);

        const requested = hostile.log.length;
        const stats = await sync(plan);
        expect(stats.quarantined).toBe(cases.length);
        // Each bad copy came the way this case is about: read by id, or an item of a list page.
        const byId = new Set(hostile.log.slice(requested).map((p) => /^\/api\/v1\/(?:tickets|deals)\/([^/?]+)/.exec(p)?.[1]));
        for (const c of cases) expect(byId.has(c.id), `${c.id} read by id`).toBe(plan === 'record');
        const q = new Map([...(await quarantined('ticket')), ...(await quarantined('deal'))]);
        for (const c of cases) {
          const reason =
            c.field === 'closeDate'
              ? /^closeDate: must be a real yyyy-mm-dd calendar date/
              : new RegExp(`^${c.field.replace(/\./g, '\\.')}: not a real calendar instant`);
          expect(q.get(c.id), `${c.kind} ${c.id} ${c.field}`).toMatch(reason);
          // The stored copy stays as it was: nothing rolled over into another day.
          expect(await stored(c.kind, c.id)).toBe(before.get(c.id));
        }
        expect(await h.store.dirtyCount()).toBe(0);
        // The bystanders synced in the same cycle.
        for (const [kind, id] of bystanders) {
          const t = (truth()[kind] as any[]).find((x) => x.id === id);
          const row = await databaseOf(h.store).selectFrom(kind).selectAll().where('id', '=', id).executeTakeFirstOrThrow();
          expect(kind === 'tickets' ? (row as any).subject : (row as any).name).toBe(kind === 'tickets' ? t.subject : t.name);
        }

        // Once the upstream sends real dates again, the next change of each record clears it.
        delete hostile.faults.patchRecords;
        for (const c of cases) await edit(c.kind, c.id);
        await sync(plan);
        expect((await quarantined('ticket')).size + (await quarantined('deal')).size).toBe(0);
        expect(await diffMirror(databaseOf(h.store), truth())).toEqual([]);
      }, 120_000);
    }

    it('an event with an impossible time is quarantined and never moves the watermark', async () => {
      const ticket = (truth().tickets as any[])[0]!.id as string;
      // 31 June rolls over to 1 July 12:00:30, within the 60 s an event may lie ahead of the clock.
      hostile.faults.injectEvent = {
        id: 'ev_31_june',
        type: 'ticket.status_changed',
        entityType: 'ticket',
        entityId: ticket,
        payload: { from: 'open', to: 'solved' },
        actor: null,
        occurredAt: `2024-06-31T${new Date(h.sim.control.now().getTime() + 30_000).toISOString().slice(11)}`,
      };
      await edit('tickets', (truth().tickets as any[])[1]!.id);
      await sync('record');
      const newest = Math.max(...(truth().events as any[]).map((e) => Date.parse(e.occurredAt)));
      expect(Date.parse((await readWatermark(h.store))!)).toBeLessThanOrEqual(newest);
      expect((await quarantined('event')).get('ev_31_june')).toMatch(
        /^occurredAt: not a real calendar instant: day 31 does not exist in 2024-06/,
      );
      expect(await databaseOf(h.store).selectFrom('events').select('id').where('id', '=', 'ev_31_june').executeTakeFirst()).toBeUndefined();
      delete hostile.faults.injectEvent;
    }, 60_000);
  });
