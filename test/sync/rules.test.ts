import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { readWatermark } from '../../src/sync/index.js';
import { dialects } from '../helpers/dialects.js';
import { harness as makeHarness, type Harness, type HarnessOptions } from './harness.js';
import { databaseOf } from '../../src/store/internal.js';

/** One test per rule of docs/design.md §4, each ending in a whole-mirror comparison with the truth. */
for (const dialect of dialects)
  describe(`sync rules (docs/design.md §4) on ${dialect.name}`, () => {
    let h: Harness | null = null;
    const harness = (options: HarnessOptions = {}) => makeHarness({ ...options, dialect });
    afterEach(async () => {
      await h?.close();
      h = null;
    });

    it('backfill, then live writes of every kind, then sync: the mirror equals the ground truth', async () => {
      h = await harness();
      await h.backfill();
      // Records are exact straight after the backfill; the events come with the first sync.
      expect((await h.diff()).filter((d) => !d.includes('events missing'))).toEqual([]);
      await h.sync();
      expect(await h.diff()).toEqual([]);
      const spam = (h.sim.control.truth().tickets as Array<{ id: string }>)[3]!.id;
      h.sim.control.actEveryKind();
      h.sim.control.act(40);
      h.sim.control.hideTicket(spam, 'spam');
      await h.sync();
      expect(await h.diff()).toEqual([]);
      const row = await databaseOf(h.store).selectFrom('tickets').select('deleted_at').where('id', '=', spam).executeTakeFirstOrThrow();
      expect(row.deleted_at).not.toBeNull();
      // A second cycle with nothing new changes nothing and re-reads nothing.
      const again = await h.sync();
      expect(again.eventsNew).toBe(0);
      expect(again.recordsFetched).toBe(0);
    });

    it('events sharing one millisecond across page boundaries (pageSize 2) are all kept', async () => {
      h = await harness({ pageSize: 2 });
      await h.backfill();
      h.sim.control.burst(7);
      await h.sync();
      expect(await h.diff()).toEqual([]);
    });

    it('an event that becomes visible late, within the lookback, is caught by the next window', async () => {
      h = await harness({ lookbackSeconds: 300 });
      await h.backfill();
      h.sim.control.setFaults({ lateEventRate: 1, lateEventDelayMs: 20_000 });
      const late = h.sim.control.act(3);
      h.sim.control.clearFaults();
      h.sim.control.act(2); // visible at once, newer: the watermark moves past the late ones
      await h.sync();
      const seen = await databaseOf(h.store).selectFrom('events').select('id').execute();
      h.sim.control.advanceClock(25_000);
      await h.sync();
      const after = await databaseOf(h.store).selectFrom('events').select('id').execute();
      expect(after.length).toBeGreaterThan(seen.length);
      expect(late.length).toBe(3);
      expect(await h.diff()).toEqual([]);
    });

    it('events appended while paging are neither lost nor duplicated', async () => {
      let pages = 0;
      h = await harness({
        pageSize: 3,
        hooks: {
          onPage: (kind) => {
            if (kind === 'events' && pages++ < 4) h!.sim.control.act(2);
          },
        },
      });
      await h.backfill();
      h.sim.control.act(12);
      await h.sync();
      await h.sync(); // the writes made during the first window fall in the second one
      expect(await h.diff()).toEqual([]);
    });

    it('an expired cursor restarts the window from its start', async () => {
      let expired = false;
      h = await harness({
        pageSize: 2,
        hooks: {
          onPage: (kind) => {
            if (kind === 'events' && !expired) {
              expired = true;
              h!.sim.control.expireCursors();
            }
          },
        },
      });
      await h.backfill();
      h.sim.control.act(8);
      await h.sync();
      expect(expired).toBe(true);
      expect(await h.diff()).toEqual([]);
      const rejected = h.sim.control.requests().filter((r) => r.path.endsWith('/events') && r.status === 410);
      expect(rejected.length).toBe(1);
    });

    it('a stale read stays dirty until a current read; three stale reads in a row are accepted and counted', async () => {
      h = await harness();
      await h.backfill();
      const ticket = (h.sim.control.truth().tickets as Array<{ id: string }>)[0]!.id;
      await fetch(`${h.sim.url}/api/v1/tickets/${ticket}`, {
        method: 'PATCH',
        headers: { authorization: 'Bearer test-key', 'content-type': 'application/json' },
        body: JSON.stringify({ priority: 'urgent', subject: 'stale read probe' }),
      });
      h.sim.control.setFaults({ staleReadRate: 1 });
      const first = await h.sync();
      expect(first.staleReads).toBe(1);
      expect(await h.store.dirtyCount()).toBe(1);
      await h.sync();
      const third = await h.sync();
      expect(third.staleAccepted).toBe(1);
      expect(await h.store.dirtyCount()).toBe(0);

      h.sim.control.clearFaults();
      await fetch(`${h.sim.url}/api/v1/tickets/${ticket}`, {
        method: 'PATCH',
        headers: { authorization: 'Bearer test-key', 'content-type': 'application/json' },
        body: JSON.stringify({ subject: 'fresh again' }),
      });
      await h.sync();
      expect(await h.diff()).toEqual([]);
    });

    it('a 404 during rehydration marks the record deleted and keeps the row', async () => {
      h = await harness();
      await h.backfill();
      const ticket = (h.sim.control.truth().tickets as Array<{ id: string }>)[1]!.id;
      h.sim.control.hideTicket(ticket, 'merged');
      await h.sync();
      const row = await databaseOf(h.store)
        .selectFrom('tickets')
        .select(['deleted_at', 'subject'])
        .where('id', '=', ticket)
        .executeTakeFirstOrThrow();
      expect(row.deleted_at).not.toBeNull();
      expect(row.subject).toBeTruthy();
      expect(await h.diff()).toEqual([]);
    });

    it('a message that is gone on re-read is removed', async () => {
      h = await harness();
      await h.backfill();
      const ticket = (h.sim.control.truth().tickets as Array<{ id: string; messages: Array<{ id: string }> }>).find(
        (t) => t.messages.length > 1,
      )!;
      const gone = ticket.messages[ticket.messages.length - 1]!.id;
      h.sim.control.removeMessage(ticket.id, gone);
      await h.sync();
      const row = await databaseOf(h.store).selectFrom('ticket_messages').select('id').where('id', '=', gone).executeTakeFirst();
      expect(row).toBeUndefined();
      expect(await h.diff()).toEqual([]);
    });

    it('an invalid record is quarantined while the rest syncs, and comes back once valid', async () => {
      h = await harness();
      await h.backfill();
      const [bad, other] = (h.sim.control.truth().deals as Array<{ id: string }>).map((d) => d.id);
      h.sim.control.corrupt('deal', bad!, 'bad-timestamp');
      h.sim.control.act(10);
      await h.sync();
      const q = await databaseOf(h.store).selectFrom('quarantine').selectAll().where('entity_id', '=', bad!).executeTakeFirstOrThrow();
      expect(q.entity_type).toBe('deal');
      expect(q.reason).toMatch(/updatedAt|createdAt|timestamp|date/i);
      expect(JSON.parse(q.raw_json).id).toBe(bad);
      // Everything but the quarantined deal matches.
      const diffs = (await h.diff()).filter((d) => !d.includes(bad!));
      expect(diffs).toEqual([]);
      expect(other).toBeDefined();

      h.sim.control.repair('deal', bad!);
      await h.sync();
      expect(await databaseOf(h.store).selectFrom('quarantine').selectAll().execute()).toEqual([]);
      expect(await h.diff()).toEqual([]);
    });

    it('429 and 5xx storms are retried and the mirror still ends exact', async () => {
      h = await harness({
        sim: { tickets: 30, deals: 10, faults: { errorRate: 0.25, rateLimitRate: 0.15, retryAfterSeconds: 0, dropRate: 0.05 } },
      });
      const backfill = await h.backfill();
      h.sim.control.act(20);
      const sync = await h.sync();
      h.sim.control.clearFaults();
      expect(backfill.retries + sync.retries).toBeGreaterThan(5);
      expect(await h.diff()).toEqual([]);
    });

    it('unknown event and entity types are stored as they come and never fetched', async () => {
      h = await harness();
      await h.backfill();
      h.sim.control.clearRequests();
      const id = h.sim.control.injectEvent({ type: 'widget.exploded', entityType: 'widget', entityId: 'w-1', payload: { power: 9000 } });
      const id2 = h.sim.control.injectEvent({
        type: 'ticket.teleported',
        entityType: 'ticket',
        entityId: (h.sim.control.truth().tickets as Array<{ id: string }>)[0]!.id,
      });
      await h.sync();
      const rows = await databaseOf(h.store).selectFrom('events').selectAll().where('id', 'in', [id, id2]).execute();
      expect(rows.map((r) => r.type).sort()).toEqual(['ticket.teleported', 'widget.exploded']);
      const widget = rows.find((r) => r.id === id)!;
      expect(widget.entity_type).toBe('widget');
      expect(JSON.parse(widget.payload_json as string)).toEqual({ power: 9000 });
      expect(h.sim.control.requests().some((r) => r.path.includes('w-1'))).toBe(false);
      expect(await h.diff()).toEqual([]);
    });

    it('a failed cycle leaves the watermark and the cursor where they were', async () => {
      h = await harness({ pageSize: 2 });
      await h.backfill();
      h.sim.control.act(6);
      const watermark = await readWatermark(h.store);
      h.sim.control.failNext({ status: 503, count: 8, path: '/api/v1/events' }); // = retry.maxAttempts
      await expect(h.sync()).rejects.toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' });
      expect(await readWatermark(h.store)).toBe(watermark);
      h.sim.control.clearFaults();
      await h.sync();
      expect(await h.diff()).toEqual([]);
      const n = await sql<{ n: number }>`select count(*) as n from sync_runs`.execute(databaseOf(h.store));
      expect(Number(n.rows[0]!.n)).toBeGreaterThan(0);
    });
  });
