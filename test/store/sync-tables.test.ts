import { describe, expect, it } from 'vitest';
import { useFreshStore } from './fixtures.js';
import { databaseOf } from '../../src/store/internal.js';
import { readSyncState, writeSyncState } from '../../src/store/sync-state.js';

describe('dirty set, state, quarantine, runs', () => {
  const { store } = useFreshStore();

  it('markDirty keeps the newest occurred_at and resets stale_reads only when it grows', async () => {
    await store.transaction((tx) =>
      tx.markDirty([
        { entityType: 'ticket', entityId: 't1', occurredAt: '2024-05-01T10:00:00Z' },
        { entityType: 'ticket', entityId: 't1', occurredAt: '2024-05-01T11:00:00Z' },
        { entityType: 'deal', entityId: 'd1', occurredAt: '2024-05-01T09:00:00Z' },
      ]),
    );
    expect(await store.transaction((tx) => tx.bumpStaleRead('ticket', 't1'))).toBe(1);
    expect(await store.transaction((tx) => tx.bumpStaleRead('ticket', 't1'))).toBe(2);
    await store.transaction((tx) => tx.markDirty([{ entityType: 'ticket', entityId: 't1', occurredAt: '2024-05-01T10:30:00Z' }]));
    expect((await store.listDirty(10)).find((d) => d.entityId === 't1')).toEqual({
      entityType: 'ticket',
      entityId: 't1',
      occurredAt: '2024-05-01T11:00:00.000Z',
      staleReads: 2,
      readUnlisted: true,
    });
    await store.transaction((tx) => tx.markDirty([{ entityType: 'ticket', entityId: 't1', occurredAt: '2024-05-01T12:00:00Z' }]));
    expect(await store.listDirty(10)).toEqual([
      { entityType: 'deal', entityId: 'd1', occurredAt: '2024-05-01T09:00:00.000Z', staleReads: 0, readUnlisted: true },
      { entityType: 'ticket', entityId: 't1', occurredAt: '2024-05-01T12:00:00.000Z', staleReads: 0, readUnlisted: true },
    ]);
    expect(await store.listDirty(1)).toHaveLength(1);
    expect(await store.dirtyCount()).toBe(2);
    expect(await store.transaction((tx) => tx.bumpStaleRead('ticket', 'nope'))).toBe(0);
  });

  it('clearDirty deletes only entries not re-marked by a newer event', async () => {
    await store.transaction((tx) => tx.markDirty([{ entityType: 'deal', entityId: 'd1', occurredAt: '2024-05-01T10:00:00.000Z' }]));
    expect(await store.transaction((tx) => tx.clearDirty('deal', 'd1', '2024-05-01T09:59:59.999Z'))).toBe(false);
    expect(await store.dirtyCount()).toBe(1);
    expect(await store.transaction((tx) => tx.clearDirty('deal', 'd1', '2024-05-01T10:00:00Z'))).toBe(true);
    expect(await store.dirtyCount()).toBe(0);
    expect(await store.transaction((tx) => tx.clearDirty('deal', 'd1', '2024-05-01T10:00:00Z'))).toBe(false);
  });

  it('state round-trips JSON and null deletes', async () => {
    expect(await readSyncState(store, 'watermark')).toBeUndefined();
    await store.transaction((tx) => writeSyncState(tx, 'window', { since: 'x', cursor: null }));
    expect(await readSyncState(store, 'window')).toEqual({ since: 'x', cursor: null });
    expect(await store.transaction((tx) => readSyncState(tx, 'window'))).toEqual({ since: 'x', cursor: null });
    await store.transaction((tx) => writeSyncState(tx, 'window', null));
    expect(await readSyncState(store, 'window')).toBeUndefined();
  });

  it('quarantine keeps first_seen_at, updates last seen, and stands in for unknown ids', async () => {
    await store.transaction((tx) =>
      tx.quarantine({ entityType: 'deal', entityId: 'd1', reason: 'a', raw: { id: 'd1' } }, '2024-05-01T00:00:00Z'),
    );
    await store.transaction((tx) =>
      tx.quarantine({ entityType: 'deal', entityId: 'd1', reason: 'b', raw: { id: 'd1', v: 2 } }, '2024-05-02T00:00:00Z'),
    );
    await store.transaction(async (tx) => {
      await tx.quarantine({ entityType: 'event', entityId: '', reason: 'no id', raw: { junk: true } }, '2024-05-02T00:00:00Z');
      await tx.quarantine({ entityType: 'event', entityId: '', reason: 'no id', raw: { junk: true } }, '2024-05-03T00:00:00Z');
      await tx.quarantine({ entityType: 'pipeline', entityId: 'unknown', reason: 'no id', raw: [1] }, '2024-05-03T00:00:00Z');
      await tx.quarantine({ entityType: 'pipeline', entityId: null, reason: 'no id', raw: [2] }, '2024-05-03T00:00:00Z');
    });
    const rows = await databaseOf(store).selectFrom('quarantine').selectAll().orderBy('entity_type').execute();
    expect(rows[0]).toEqual({
      entity_type: 'deal',
      entity_id: 'd1',
      reason: 'b',
      raw_json: '{"id":"d1","v":2}',
      first_seen_at: '2024-05-01 00:00:00.000',
      last_seen_at: '2024-05-02 00:00:00.000',
    });
    expect(rows[1]?.entity_id).toMatch(/^unknown:[0-9a-f]{40}$/);
    expect(rows[1]?.last_seen_at).toBe('2024-05-03 00:00:00.000');
    expect(rows.filter((r) => r.entity_type === 'pipeline').map((r) => r.entity_id.slice(0, 8))).toEqual(['unknown:', 'unknown:']);
    expect((await store.counts()).quarantine).toBe(4);
    await store.transaction((tx) => tx.clearQuarantine('deal', 'd1'));
    expect((await store.counts()).quarantine).toBe(3);
  });

  it('records sync runs', async () => {
    const id = await store.transaction((tx) => tx.startRun('sync', '2024-05-01T00:00:00Z'));
    let row = await databaseOf(store).selectFrom('sync_runs').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(row.outcome).toBe('running');
    // The store's own start (no transaction around one insert) makes the same row, with the next id.
    const second = await store.startRun('backfill', '2024-05-01T00:00:01Z');
    expect(second).toBeGreaterThan(id);
    expect(await databaseOf(store).selectFrom('sync_runs').select(['kind', 'outcome']).where('id', '=', second).executeTakeFirst()).toEqual(
      {
        kind: 'backfill',
        outcome: 'running',
      },
    );
    await store.transaction((tx) =>
      tx.finishRun(id, {
        finishedAt: '2024-05-01T00:00:05Z',
        outcome: 'success',
        eventsRead: 10,
        eventsNew: 4,
        recordsFetched: 3,
        requests: 5,
        retries: 1,
      }),
    );
    row = await databaseOf(store).selectFrom('sync_runs').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ finished_at: '2024-05-01 00:00:05.000', outcome: 'success', events_new: 4, retries: 1, error: null });
  });

  it('rolls back a failed transaction', async () => {
    await expect(
      store.transaction(async (tx) => {
        await writeSyncState(tx, 'k', 1);
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await readSyncState(store, 'k')).toBeUndefined();
  });
});
