import { afterEach, describe, expect, it } from 'vitest';
import type { WorkspaceEvent } from '../../src/api/index.js';
import { databaseOf } from '../../src/store/internal.js';
import { commitPages, type CommittedPage, type ReadPage } from '../../src/sync/event-page.js';
import type { SyncContext } from '../../src/sync/index.js';
import type { WindowState } from '../../src/sync/state.js';
import { dialects } from '../helpers/dialects.js';
import { harness, type Harness } from './harness.js';

/**
 * A group of change-log pages commits with the outcome of its pages committed one by one
 * (src/sync/event-page.ts, docs/sync.md "Change-log pages commit in groups"), though its events
 * are stored together: the same events, history, gaps, dirty marks, deletions, quarantine rows and
 * window state, and the same counts per page. The pages hold what makes a group differ from its
 * pages: an event read again on a later page, an id reused for another record, deletions of one
 * record at two times, late events on two pages, an event older than the mirrored copy, a rejected
 * event, and a deal stage move whose status follows from the stages table.
 */
for (const dialect of dialects)
  describe(`a group of change-log pages on ${dialect.name}`, () => {
    const open: Harness[] = [];
    afterEach(async () => {
      for (const h of open.splice(0)) await h.close();
    });

    async function mirror(): Promise<Harness> {
      const h = await harness({ dialect });
      open.push(h);
      await h.backfill();
      return h;
    }

    const tables = async (h: Harness) => {
      const db = databaseOf(h.store);
      const rows = async (table: string, columns: string[], order: string[]) =>
        (await db
          .selectFrom(table as 'events')
          .select(columns as 'id'[])
          .$call((q) => order.reduce((o, c) => o.orderBy(c as 'id'), q))
          .execute()) as unknown[];
      return {
        events: await rows('events', ['id', 'type', 'entity_type', 'entity_id', 'occurred_at'], ['id']),
        dirty: await rows(
          'dirty',
          ['entity_type', 'entity_id', 'occurred_at', 'read_messages', 'stale_reads'],
          ['entity_type', 'entity_id'],
        ),
        ticketHistory: await rows(
          'ticket_history',
          ['ticket_id', 'field', 'from_value', 'to_value', 'changed_at', 'source', 'event_id'],
          ['ticket_id', 'changed_at', 'field'],
        ),
        dealHistory: await rows(
          'deal_history',
          ['deal_id', 'field', 'from_value', 'to_value', 'changed_at', 'source', 'event_id'],
          ['deal_id', 'changed_at', 'field'],
        ),
        gaps: await rows(
          'history_gaps',
          ['entity_type', 'entity_id', 'event_id', 'fields', 'reason'],
          ['entity_type', 'entity_id', 'event_id'],
        ),
        quarantine: await rows('quarantine', ['entity_type', 'entity_id', 'reason'], ['entity_type', 'entity_id']),
        deals: await rows('deals', ['id', 'deleted_at'], ['id']),
        state: await rows('sync_state', ['key', 'value_json'], ['key']),
      };
    };

    /** Records of the mirror the events name, and two stages of d2's pipeline. */
    interface Ids {
      tickets: string[];
      deals: string[];
      stages: string[];
    }

    function pages({ tickets, deals, stages }: Ids, ends: boolean, now: number): ReadPage[] {
      const at = (msAgo: number) => new Date(now - msAgo).toISOString();
      const ev = (
        id: string,
        type: string,
        entityType: string,
        entityId: string,
        occurredAt: string,
        payload: unknown = {},
      ): WorkspaceEvent =>
        ({
          id,
          type,
          entityType,
          entityId,
          occurredAt,
          payload,
          actor: { id: 'usr_grp', name: 'Group Tester', email: null },
        }) as WorkspaceEvent;
      const [t1, t2, t3, t4] = tickets;
      const [d1, d2] = deals;
      const [s1, s2] = stages;
      const first = ev('evt_g1', 'ticket.status_changed', 'ticket', t1!, at(1_000), { from: 'open', to: 'pending' });
      const replied = ev('evt_g2', 'ticket.replied', 'ticket', t2!, at(2_000), { messageId: 'msg_grp' });
      const lateBefore = at(50_000);
      const window = (cursor: string | null, maxAgo: number, reach?: string): WindowState => ({
        since: at(600_000),
        cursor,
        maxOccurredAt: at(maxAgo),
        readFloor: null,
        lateBefore,
        ...(reach ? { reach } : {}),
      });
      const page = (events: WorkspaceEvent[], next: WindowState, mayEnd = false, rejected: ReadPage['rejected'] = []): ReadPage => ({
        page: { items: events, invalid: [], nextCursor: next.cursor },
        events,
        rejected,
        next,
        mayEnd,
      });
      return [
        page([first, replied, ev('evt_g3', 'deal.deleted', 'deal', d1!, at(3_000)), first], window('c1', 1_000)),
        page(
          [
            first,
            // Another record under the id of page 1's reply: the upstream reused it.
            ev('evt_g2', 'ticket.priority_changed', 'ticket', t3!, at(2_500), { from: 'low', to: 'high' }),
            ev('evt_g4', 'deal.deleted', 'deal', d1!, at(4_000)),
            ev('evt_g5', 'ticket.priority_changed', 'ticket', t3!, at(100_000), { from: 'high', to: 'urgent' }),
            ev('evt_g6', 'ticket.status_changed', 'ticket', t1!, '2000-01-01T00:00:00.000Z', { from: 'new', to: 'open' }),
          ],
          window('c2', 1_000, at(80_000)),
        ),
        page(
          [
            ev('evt_g7', 'deal.stage_changed', 'deal', d2!, at(5_000), { from: s1, to: s2 }),
            ev('evt_g8', 'ticket.replied', 'ticket', t4!, at(200_000), { messageId: 'msg_grp2' }),
            ev('evt_g9', 'ticket.status_changed', 'ticket', t4!, at(6_000), {}),
          ],
          window(ends ? null : 'c3', 1_000, at(80_000)),
          !ends,
          [{ id: 'evt_bad', reason: 'its occurredAt is not a time', raw: { id: 'evt_bad', entityType: 'ticket', entityId: t2 } }],
        ),
      ];
    }

    async function idsOf(h: Harness): Promise<Ids> {
      const db = databaseOf(h.store);
      const pick = async (table: 'tickets' | 'deals') =>
        (await db.selectFrom(table).select('id').orderBy('id').limit(4).execute()).map((r) => r.id);
      const deal = await db.selectFrom('deals').select(['pipeline_id']).orderBy('id').limit(1).offset(1).executeTakeFirstOrThrow();
      const stages = (
        await db.selectFrom('stages').select('id').where('pipeline_id', '=', deal.pipeline_id!).orderBy('position').limit(3).execute()
      ).map((r) => r.id);
      return { tickets: await pick('tickets'), deals: await pick('deals'), stages: [stages[0]!, stages[stages.length - 1]!] };
    }

    type Tables = Awaited<ReturnType<typeof tables>>;
    /** Per table, the rows the commit added and the rows it removed (or changed). */
    const changes = (before: Tables, after: Tables) =>
      Object.fromEntries(
        Object.keys(after).map((t) => {
          const was = new Set(before[t as keyof Tables].map((r) => JSON.stringify(r)));
          const is = new Set(after[t as keyof Tables].map((r) => JSON.stringify(r)));
          const removed = before[t as keyof Tables].filter((r) => !is.has(JSON.stringify(r)));
          // A state row's old value is the simulator's (its clock); which keys changed is the commit's.
          return [
            t,
            { added: [...is].filter((r) => !was.has(r)), removed: removed.map((r) => (t === 'state' ? (r as { key: string }).key : r)) },
          ];
        }),
      );

    const summary = (results: CommittedPage[]) =>
      results.map((r) => ({
        newCount: r.newCount,
        ended: r.ended,
        late: r.late?.id ?? null,
        lateCount: r.lateCount,
        reused: r.reused.map((e) => `${e.id}:${e.entityId}`),
        window: r.window,
      }));
    const historyOf = (results: CommittedPage[]) => ({
      tickets: [...new Set(results.flatMap((r) => [...r.historyOf.tickets]))].sort(),
      deals: [...new Set(results.flatMap((r) => [...r.historyOf.deals]))].sort(),
    });

    for (const ends of [true, false])
      it(`stores what its pages one by one store (${ends ? 'the window ends' : 'the window goes on'})`, async () => {
        const grouped = await mirror();
        const single = await mirror();
        const ids = await idsOf(grouped);
        expect(await idsOf(single)).toEqual(ids);
        // Two simulators, two clocks: the mirrors differ in their times, so what the pages changed is compared.
        const beforeGrouped = await tables(grouped);
        const beforeSingle = await tables(single);
        const clock = Date.now();
        const now = new Date(clock).toISOString();
        const ctxOf = (h: Harness): SyncContext => ({ ...h.ctx, now: () => now });

        const together = await commitPages(ctxOf(grouped), pages(ids, ends, clock));
        const alone: CommittedPage[] = [];
        for (const p of pages(ids, ends, clock)) {
          // As the window reader goes on: a page after a late event reads without its reach.
          const lost = alone.length > 0 && alone[alone.length - 1]!.window.reach === undefined;
          const { reach: _reach, ...withoutReach } = p.next;
          const [r] = await commitPages(ctxOf(single), [lost ? { ...p, next: withoutReach } : p]);
          alone.push(r!);
          if (r!.ended) break;
        }

        expect(summary(together)).toEqual(summary(alone));
        expect(historyOf(together)).toEqual(historyOf(alone));
        expect(changes(beforeGrouped, await tables(grouped))).toEqual(changes(beforeSingle, await tables(single)));
        // The pages did what they are there for: new events, a reuse, late events, a quarantined reject.
        expect(together.map((r) => r.newCount)).toEqual([3, 3, 3]);
        expect(together[1]!.reused.map((e) => e.id)).toEqual(['evt_g2']);
        expect(together.map((r) => r.late?.id ?? null)).toEqual([null, 'evt_g6', 'evt_g8']);
        expect(together[2]!.ended).toBe(ends);
        expect(historyOf(together).deals.length).toBeGreaterThan(0);
      });
  });
