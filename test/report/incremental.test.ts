import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { refreshRptTables } from '../../src/report/index.js';
import type { Store } from '../../src/store/index.js';
import { dialects } from '../helpers/dialects.js';
import { tempDir } from '../store/fixtures.js';
import { rows } from './oracle.js';
import { insertTicket } from './rows.js';
import { buildScenario, NOW } from './scenario.js';
import { dump, fullRebuildDump, reportStore } from './stores.js';
import { databaseOf } from '../../src/store/internal.js';

const d = (day: number, hm: string) => `2024-03-0${day}T${hm}:00.000Z`;

for (const dialect of dialects)
  describe(`incremental refresh gives the tables a full rebuild gives (${dialect.name})`, () => {
    let tmp: ReturnType<typeof tempDir>;
    let store: Store;
    let close: () => Promise<void>;
    beforeEach(async () => {
      tmp = tempDir();
      ({ store, close } = await reportStore(dialect));
      await buildScenario(store);
      await refreshRptTables(store, { tickets: 'all', deals: 'all' }, { now: NOW });
    });
    afterEach(async () => {
      await close();
      tmp.cleanup();
    });

    /** Incremental refresh of the changed ids, then the same clock's full rebuild of the same mirror. */
    const cycle = async (tickets: string[], deals: string[], now: Date) => {
      await refreshRptTables(store, { tickets: new Set(tickets), deals: new Set(deals) }, { now });
      const incremental = await dump(store);
      expect(incremental).toEqual(await fullRebuildDump(store, now, tmp.dir));
    };

    it('through moves between days, a reopen, new messages, SLA lapses, deletions and a moving first day', async () => {
      const db = databaseOf(store);
      const daily = async () =>
        (await rows(store, 'SELECT day, created, backlog FROM rpt_support_daily ORDER BY day')).map((r) => [r.day, r.created, r.backlog]);

      // T3 moves from March 2 to March 4 with its messages (a message of the previous copy moves: the agent table's fallback).
      await db
        .updateTable('tickets')
        .set({ created_at: d(4, '09:00'), first_agent_reply_at: d(4, '09:30'), updated_at: d(4, '09:30') })
        .where('id', '=', 'T3')
        .execute();
      await db
        .updateTable('ticket_messages')
        .set({ created_at: d(4, '09:00') })
        .where('id', '=', 'm9')
        .execute();
      await db
        .updateTable('ticket_messages')
        .set({ created_at: d(4, '09:30') })
        .where('id', '=', 'm10')
        .execute();
      await cycle(['T3'], [], NOW);
      expect((await daily()).slice(0, 4)).toEqual([
        ['2024-03-01', 2, 1],
        ['2024-03-02', 0, 1],
        ['2024-03-03', 1, 0],
        ['2024-03-04', 1, 1],
      ]);

      // T5 reopens on March 5, is reassigned to u2, who replies (a new message: the delta path).
      await db
        .updateTable('tickets')
        .set({ status: 'open', updated_at: d(5, '10:30'), resolved_at: null, assignee_id: 'u2' })
        .where('id', '=', 'T5')
        .execute();
      await db
        .insertInto('ticket_history')
        .values([
          {
            ticket_id: 'T5',
            field: 'status',
            from_value: 'solved',
            to_value: 'open',
            changed_at: d(5, '10:00'),
            source: 'event',
            event_id: 'inc1',
            observed_since: null,
          },
          {
            ticket_id: 'T5',
            field: 'assignee_id',
            from_value: 'u1',
            to_value: 'u2',
            changed_at: d(5, '10:00'),
            source: 'observed',
            event_id: null,
            observed_since: null,
          },
        ])
        .execute();
      await db
        .insertInto('ticket_messages')
        .values({
          id: 'm14',
          ticket_id: 'T5',
          body: 'x',
          author_type: 'agent',
          author_id: 'u2',
          is_internal: 0,
          attachments_json: '[]',
          created_at: d(5, '10:30'),
          raw_json: '{}',
        })
        .execute();
      await cycle(['T5'], [], NOW);
      expect(await rows(store, "SELECT reopened FROM rpt_support_daily WHERE day = '2024-03-05'")).toEqual([{ reopened: 1 }]);

      // A new ticket whose first-reply target lapses with the clock alone, in a cycle that changed only a deal.
      await insertTicket(store, {
        id: 'T6',
        status: 'open',
        createdAt: d(5, '20:00'),
        firstReplyDueAt: '2024-03-06T06:00:00.000Z',
        resolveDueAt: '2024-03-07T20:00:00.000Z',
        messages: [{ id: 'm15', authorType: 'customer', authorId: 'c1', at: d(5, '20:00') }],
      });
      await cycle(['T6'], [], NOW);
      await db.updateTable('deals').set({ amount_cents: 30000, amount: '300.00' }).where('id', '=', 'DL3').execute();
      await cycle([], ['DL3'], new Date('2024-03-06T12:00:00.000Z'));
      expect(await rows(store, "SELECT first_reply_sla_breached FROM rpt_support_daily WHERE day = '2024-03-06'")).toEqual([
        { first_reply_sla_breached: 1 },
      ]);

      // T7, with a reply of u1 on March 3, is deleted; then T5, where u1 also replied on March 3,
      // changes without its messages (the incremental path): the recomputed (u1, March 3) figures
      // must leave the deleted ticket's reply out.
      const u1March3 = () => rows(store, "SELECT public_replies FROM rpt_agent_daily WHERE agent_id = 'u1' AND day = '2024-03-03'");
      const at = new Date('2024-03-06T12:00:00.000Z');
      await insertTicket(store, {
        id: 'T7',
        status: 'open',
        createdAt: d(3, '10:00'),
        messages: [{ id: 'm16', authorType: 'agent', authorId: 'u1', at: d(3, '10:00') }],
      });
      await cycle(['T7'], [], at);
      expect(await u1March3()).toEqual([{ public_replies: 2 }]);
      await db
        .updateTable('tickets')
        .set({ deleted_at: d(6, '11:00') })
        .where('id', '=', 'T7')
        .execute();
      await cycle(['T7'], [], at);
      await db
        .updateTable('tickets')
        .set({ priority: 'high', updated_at: d(6, '11:30') })
        .where('id', '=', 'T5')
        .execute();
      await cycle(['T5'], [], at);
      expect(await u1March3()).toEqual([{ public_replies: 1 }]);

      // T1 deleted; a message of T2 deleted upstream (left the mirror before the refresh).
      await db
        .updateTable('tickets')
        .set({ deleted_at: d(6, '13:00') })
        .where('id', '=', 'T1')
        .execute();
      await db.deleteFrom('ticket_messages').where('id', '=', 'm8').execute();
      await cycle(['T1', 'T2'], [], new Date('2024-03-06T13:00:00.000Z'));

      // A new day begins; then the first ticket goes and the range starts later.
      await cycle(['T5'], [], new Date('2024-03-07T01:00:00.000Z'));
      await db
        .updateTable('tickets')
        .set({ deleted_at: d(7, '02:00') })
        .where('id', '=', 'T2')
        .execute();
      await cycle(['T2'], [], new Date('2024-03-07T02:00:00.000Z'));
      expect((await daily())[0]?.[0]).toBe('2024-03-03');
    });

    it('an empty cycle after a full rebuild changes no aggregate', async () => {
      const before = await dump(store);
      await cycle([], ['DL1'], NOW);
      expect(await dump(store)).toEqual(before);
    });
  });
