import { afterAll, describe, expect, it } from 'vitest';
import { createApiClient } from '../../src/api/index.js';
import { silentLogger } from '../../src/log/index.js';
import { openStore, type DirtyEntry, type Store } from '../../src/store/index.js';
import type { RecordOutcome, SyncContext } from '../../src/sync/index.js';
import { applyWrites, deletedWrite, quarantineAlone, quarantineWrite, readWrite, type RecordWrite } from '../../src/sync/drain-writes.js';
import { WriteBatch } from '../../src/sync/write-batch.js';
import { dialects } from '../helpers/dialects.js';
import { tableSnapshot } from '../helpers/snapshot.js';
import { deal, SYNCED, ticket, upsertOne } from '../store/fixtures.js';
import { databaseOf } from '../../src/store/internal.js';

/**
 * The drain writes a batch set-based (one bulk upsert per type, one statement for the dirty marks);
 * its outcome must be that of writing the same records one by one, each in its own transaction:
 * the same outcome per record and the same rows, whatever the batch mixes.
 */

const at = (minute: number) => `2024-05-01T10:${String(minute).padStart(2, '0')}:00.000Z`;

const TABLES = [
  'tickets',
  'ticket_messages',
  'ticket_tags',
  'ticket_fields',
  'ticket_history',
  'users',
  'contacts',
  'deals',
  'deal_contacts',
  'deal_fields',
  'deal_history',
  'quarantine',
  'dirty',
] as const;

/** The tables a drain writes; marked_at is a wall-clock time. */
const snapshot = (store: Store) => tableSnapshot(store, TABLES, ['marked_at']);

/** A mirror holding a few records, each marked dirty at minute 5 (d-accept already read stale twice). */
async function prepared(database: string): Promise<{ store: Store; entries: Map<string, DirtyEntry> }> {
  const store = await openStore({ database });
  await store.migrate();
  await store.transaction(async (tx) => {
    for (const id of ['known', 'gone', 'stale', 'remarked']) await upsertOne(tx, 'ticket', ticket({ id, updatedAt: at(0) }), SYNCED);
    for (const id of ['d-known', 'd-accept']) await upsertOne(tx, 'deal', deal({ id, updatedAt: at(0) }), SYNCED);
    const tickets = ['known', 'new', 'stale', 'gone', 'bad', 'refused', 'remarked'];
    await tx.markDirty([
      ...tickets.map((entityId) => ({ entityType: 'ticket' as const, entityId, occurredAt: at(5) })),
      ...['d-known', 'd-accept', 'd-quar'].map((entityId) => ({ entityType: 'deal' as const, entityId, occurredAt: at(5) })),
    ]);
    for (let i = 0; i < 2; i++) await tx.bumpStaleRead('deal', 'd-accept');
  });
  const entries = new Map((await store.listDirty(100)).map((e) => [e.entityId, e]));
  // Re-marked by a newer event after the drain read the mark: the read commits, the mark stays.
  await store.transaction((tx) => tx.markDirty([{ entityType: 'ticket', entityId: 'remarked', occurredAt: at(8) }]));
  return { store, entries };
}

function batch(entries: Map<string, DirtyEntry>): RecordWrite[] {
  const e = (id: string) => entries.get(id)!;
  return [
    readWrite(e('known'), ticket({ id: 'known', updatedAt: at(6), status: 'pending', tags: ['new'] })),
    readWrite(e('new'), ticket({ id: 'new', updatedAt: at(5), messages: [] })),
    readWrite(e('stale'), ticket({ id: 'stale', updatedAt: at(3) })),
    deletedWrite(e('gone')),
    readWrite(e('bad'), ticket({ id: 'bad', updatedAt: 'not a time', messages: [] })),
    // PostgreSQL's integer column refuses 2^31 (class 22): only this record is quarantined.
    readWrite(e('refused'), ticket({ id: 'refused', updatedAt: at(6), messageCount: 2 ** 31, messages: [] })),
    readWrite(e('remarked'), ticket({ id: 'remarked', updatedAt: at(6), priority: 'urgent' })),
    readWrite(e('d-known'), deal({ id: 'd-known', updatedAt: at(6), amount: '99.00', fields: { source: 'phone' } })),
    readWrite(e('d-accept'), deal({ id: 'd-accept', updatedAt: at(3) })),
    quarantineWrite(e('d-quar'), 'the workspace answered 418 for this record', { status: 418 }),
    // The same records again: written after the first, as one by one (a second stale read counts twice).
    readWrite(e('known'), ticket({ id: 'known', updatedAt: at(7), status: 'solved', tags: ['new'] })),
    readWrite(e('stale'), ticket({ id: 'stale', updatedAt: at(4) })),
  ];
}

function context(store: Store): SyncContext {
  return {
    store,
    // Never called: the writes only touch the store.
    client: createApiClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'unused' }),
    logger: silentLogger(),
    config: { lookbackSeconds: 300, pageSize: 100, concurrency: 1 },
    stopSignal: new AbortController().signal,
    now: () => SYNCED,
  };
}

for (const dialect of dialects) {
  describe(`drain writes on ${dialect.name}`, () => {
    const cleanups: (() => Promise<void>)[] = [];
    afterAll(async () => {
      for (const c of cleanups) await c();
    });
    const setUp = async () => {
      const db = await dialect.newDatabase();
      const p = await prepared(db.database);
      const ctx = context(p.store);
      cleanups.push(async () => {
        await ctx.client.close();
        await p.store.close();
        await db.drop();
      });
      return { ...p, ctx };
    };

    it('a batch ends as writing its records one by one does, with the same outcomes', async () => {
      const one = await setUp();
      const many = await setUp();
      const sequential: RecordOutcome[] = [];
      for (const w of batch(one.entries)) sequential.push(...(await one.store.transaction((tx) => applyWrites(one.ctx, tx, [w]))));
      const together = await many.store.transaction((tx) => applyWrites(many.ctx, tx, batch(many.entries)));

      expect(together).toEqual(sequential);
      expect(together).toEqual([
        'fresh',
        'fresh',
        'stale',
        'deleted',
        'quarantined',
        dialect.name === 'postgres' ? 'quarantined' : 'fresh',
        'fresh',
        'fresh',
        'stale-accepted',
        'quarantined',
        'fresh',
        'stale',
      ]);
      expect(await snapshot(many.store)).toEqual(await snapshot(one.store));
      const dirty = await many.store.listDirty(100);
      expect(dirty.map((e) => [e.entityId, e.occurredAt, e.staleReads])).toEqual([
        ['stale', at(5), 2],
        ['remarked', at(8), 0],
      ]);
      const history = await databaseOf(many.store)
        .selectFrom('ticket_history')
        .select(['ticket_id', 'field', 'to_value'])
        .orderBy('id')
        .execute();
      expect(history.filter((h) => h.ticket_id === 'known').map((h) => h.to_value)).toEqual(['pending', 'solved']);
    });

    it('a quarantined raw copy holding a lone surrogate is kept with U+FFFD, in the batch, on both dialects', async () => {
      const { store, entries, ctx } = await setUp();
      const done: [string, RecordOutcome][] = [];
      const writes = new WriteBatch<RecordWrite>(store, {
        apply: (tx, writes) => applyWrites(ctx, tx, writes),
        committed: (w, outcome) => done.push([w.entry.entityId, outcome]),
        refused: (w, sqlState, err) => quarantineAlone(ctx, w.entry, `refused (${sqlState}): ${err.message}`, w.record),
      });
      await writes.add(readWrite(entries.get('new')!, ticket({ id: 'new', updatedAt: at(5), messages: [] })));
      // jsonb refused the escape of a lone surrogate; the store now writes U+FFFD instead (docs/schema.md).
      await writes.add(quarantineWrite(entries.get('d-quar')!, 'the workspace answered 418 for this record', { body: 'a\ud800b' }));
      await writes.add(deletedWrite(entries.get('gone')!));
      await writes.flush();
      expect(done).toEqual([
        ['new', 'fresh'],
        ['d-quar', 'quarantined'],
        ['gone', 'deleted'],
      ]);
      const q = await databaseOf(store).selectFrom('quarantine').select(['entity_id', 'reason', 'raw_json']).execute();
      expect(q.map((r) => r.entity_id)).toEqual(['d-quar']);
      expect(q[0]!.reason).toBe('the workspace answered 418 for this record');
      expect(JSON.parse(q[0]!.raw_json)).toEqual({ body: 'a\uFFFDb' });
      const left = (await store.listDirty(100)).map((e) => e.entityId);
      expect(left).not.toContain('new');
      expect(left).not.toContain('d-quar');
      expect(left).not.toContain('gone');
    });
  });
}
