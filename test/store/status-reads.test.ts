import { describe, expect, it } from 'vitest';
import { DEFERRED_INDEXES_KEY } from '../../src/store/index.js';
import { writeSyncState } from '../../src/store/sync-state.js';
import { dialects } from '../helpers/dialects.js';
import { fromDbTimestamp } from '../../src/util/time.js';
import { deal, statusEvent, ticket, useDialectStore, upsertOne } from './fixtures.js';

/**
 * The named questions status, the daemon, verify and the quarantine ask the store
 * (src/store/status-reads.ts), on each database: what they answer is what the callers print.
 */
for (const dialect of dialects) {
  describe(`status reads on ${dialect.name}`, () => {
    const store = useDialectStore(dialect);

    it('answers an empty mirror with nothing, not an error', async () => {
      expect(await store.recentRuns(5)).toEqual([]);
      expect(await store.lastRunOf('verify')).toBeNull();
      expect(await store.newestQuarantined(5)).toEqual([]);
      expect(await store.quarantinedByType()).toEqual({});
      expect(await store.quarantinedRecords()).toEqual([]);
      expect(await store.quarantinedIds('event', [])).toEqual(new Set());
      expect(await store.listedDealCount()).toBe(0);
      expect(await store.ticketsByStatus()).toEqual([]);
      expect(await store.oldestEventAt()).toBeNull();
      expect(await store.deferredIndexes()).toEqual([]);
    });

    it('lists runs newest first and finds the last run of a kind by its start', async () => {
      await store.transaction(async (tx) => {
        await tx.startRun('verify', '2024-05-01T12:00:00Z');
        await tx.startRun('sync', '2024-05-01T10:00:00Z');
        await tx.startRun('verify', '2024-05-01T11:00:00Z');
      });
      const runs = await store.recentRuns(2);
      expect(runs.map((r) => [r.kind, fromDbTimestamp(r.started_at)])).toEqual([
        ['verify', '2024-05-01T11:00:00.000Z'],
        ['sync', '2024-05-01T10:00:00.000Z'],
      ]);
      // By started_at, not by id: the verify inserted first started last.
      expect(fromDbTimestamp((await store.lastRunOf('verify'))?.started_at)).toBe('2024-05-01T12:00:00.000Z');
      expect(await store.lastRunOf('backfill')).toBeNull();
    });

    it('summarises the quarantine by type, newest first, records only for a repair, ids asked for', async () => {
      const item = (entityType: string, entityId: string) => ({ entityType, entityId, reason: `bad ${entityId}`, raw: {} });
      await store.transaction(async (tx) => {
        await tx.quarantine(item('ticket', 't9'), '2024-05-01T10:00:00Z');
        await tx.quarantine(item('deal', 'd9'), '2024-05-01T12:00:00Z');
        await tx.quarantine(item('event', 'e1'), '2024-05-01T11:00:00Z');
        await tx.quarantine(item('event', 'e2'), '2024-05-01T09:00:00Z');
      });
      expect(await store.newestQuarantined(2)).toEqual([
        { entity_type: 'deal', entity_id: 'd9', reason: 'bad d9', last_seen_at: expect.anything() },
        { entity_type: 'event', entity_id: 'e1', reason: 'bad e1', last_seen_at: expect.anything() },
      ]);
      expect(await store.quarantinedByType()).toEqual({ ticket: 1, deal: 1, event: 2 });
      const records = await store.quarantinedRecords();
      expect(records.sort((a, b) => a.entityId.localeCompare(b.entityId))).toEqual([
        { entityType: 'deal', entityId: 'd9' },
        { entityType: 'ticket', entityId: 't9' },
      ]);
      expect(await store.quarantinedIds('event', ['e1', 'e3', 't9'])).toEqual(new Set(['e1']));
    });

    it("sums the pipelines' dealCount and counts live tickets per status", async () => {
      await store.transaction(async (tx) => {
        await tx.upsertPipelines([
          { id: 'p1', name: 'Sales', dealCount: 7, stages: [{ id: 's1', name: 'Lead', position: 0, isWon: false, isLost: false }] },
          { id: 'p2', name: 'Renewals', dealCount: 5, stages: [] },
        ]);
        await upsertOne(tx, 'deal', deal(), '2024-05-02T00:00:00Z');
        await upsertOne(tx, 'ticket', ticket({ id: 't1', status: 'open' }), '2024-05-02T00:00:00Z');
        await upsertOne(tx, 'ticket', ticket({ id: 't2', number: 2, status: 'solved' }), '2024-05-02T00:00:00Z');
        await upsertOne(tx, 'ticket', ticket({ id: 't3', number: 3, status: 'open' }), '2024-05-02T00:00:00Z');
        await upsertOne(tx, 'ticket', ticket({ id: 't4', number: 4, status: 'solved' }), '2024-05-02T00:00:00Z');
        await tx.markDeleted('ticket', 't4', '2024-05-02T00:00:00Z');
      });
      // The upstream's figure, not the deals mirrored (one).
      expect(await store.listedDealCount()).toBe(12);
      expect(await store.ticketsByStatus()).toEqual([
        { status: 'open', count: 2 },
        { status: 'solved', count: 1 },
      ]);
    });

    it('gives the oldest event kept and the indexes a backfill left deferred', async () => {
      await store.transaction((tx) =>
        tx.insertEvents(
          [
            statusEvent('e1', 't1', 'open', 'pending', '2024-05-01T10:00:00Z'),
            statusEvent('e2', 't1', 'pending', 'solved', '2024-05-01T09:00:00Z'),
          ],
          '2024-05-02T00:00:00Z',
        ),
      );
      expect(fromDbTimestamp(await store.oldestEventAt())).toBe('2024-05-01T09:00:00.000Z');
      const deferred = [{ name: 'tickets_status_idx', sql: 'CREATE INDEX tickets_status_idx ON tickets (status)' }];
      await store.transaction((tx) => writeSyncState(tx, DEFERRED_INDEXES_KEY, deferred));
      expect(await store.deferredIndexes()).toEqual(deferred);
    });
  });
}
