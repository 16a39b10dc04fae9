import { sql } from 'kysely';
import { afterAll, beforeEach, afterEach, describe, expect, it } from 'vitest';
import { loadMigrations } from '../../migrations/index.js';
import { openStore, type Store } from '../../src/store/index.js';
import { SYNCED, deal, statusEvent, ticket, upsertOne } from './fixtures.js';
import { startPg, type PgServer } from './pg-cluster.js';
import { databaseOf } from '../../src/store/internal.js';
import { readSyncState, writeSyncState } from '../../src/store/sync-state.js';

const migrations = await loadMigrations();

// The same store against PostgreSQL: values must come back in the shapes SQLite gives (ISO text
// timestamps, 'yyyy-mm-dd' dates, JSON text, numbers for bigint) so callers never branch.
const server: PgServer | null = await startPg();

describe.skipIf(!server)('PostgreSQL dialect', () => {
  let url: string;
  let store: Store;
  afterAll(async () => {
    await server?.stop();
  });
  beforeEach(async () => {
    url = await server!.createDatabase();
    store = await openStore({ database: url });
    expect(await store.migrate()).toEqual({ applied: Object.keys(migrations) });
  });
  afterEach(async () => {
    await store.close();
  });

  it('creates the contract with PostgreSQL types and migrates idempotently', async () => {
    expect(store.dialect).toBe('postgres');
    expect(await store.migrate()).toEqual({ applied: [] });
    const cols = await sql<{ table_name: string; column_name: string; data_type: string }>`
      select table_name, column_name, data_type from information_schema.columns where table_schema = current_schema()`.execute(
      databaseOf(store),
    );
    const type = (t: string, c: string) => cols.rows.find((r) => r.table_name === t && r.column_name === c)?.data_type;
    expect(type('tickets', 'updated_at')).toBe('timestamp with time zone');
    expect(type('tickets', 'raw_json')).toBe('jsonb');
    expect(type('ticket_messages', 'is_internal')).toBe('boolean');
    expect(type('deals', 'amount')).toBe('numeric');
    expect(type('deals', 'amount_cents')).toBe('bigint');
    expect(type('deals', 'close_date')).toBe('date');
    expect(type('ticket_history', 'observed_since')).toBe('timestamp with time zone');
  });

  it('round-trips tickets and deals in the SQLite shapes, with observed history and stale protection', async () => {
    await store.transaction(async (tx) => {
      await upsertOne(tx, 'ticket', ticket(), SYNCED);
      await upsertOne(tx, 'deal', deal({ amount: '19.99' }), SYNCED);
    });
    const t = await databaseOf(store).selectFrom('tickets').selectAll().executeTakeFirstOrThrow();
    expect(t.updated_at).toBe('2024-05-01 09:00:00.000');
    expect(JSON.parse(t.fields_json!)).toEqual({ plan: 'pro', seats: 12, vip: true, meta: { a: 1 } });
    const m = await databaseOf(store).selectFrom('ticket_messages').select(['id', 'is_internal']).orderBy('id').execute();
    expect(m).toEqual([
      { id: 'm1', is_internal: false },
      { id: 'm2', is_internal: true },
    ]);
    const d = await databaseOf(store).selectFrom('deals').select(['amount', 'amount_cents', 'close_date']).executeTakeFirstOrThrow();
    expect(d).toEqual({ amount: 19.99, amount_cents: 1999, close_date: '2024-06-30' });

    const r = await store.transaction((tx) => upsertOne(tx, 'deal', deal({ amount: '20.00', updatedAt: '2024-05-02T00:00:00Z' }), SYNCED));
    expect(r).toEqual({ history: 1, superseded: false, quarantined: false });
    expect(await store.transaction((tx) => upsertOne(tx, 'deal', deal(), SYNCED))).toEqual({
      history: 0,
      superseded: true,
      quarantined: false,
    });
    const h = await databaseOf(store).selectFrom('deal_history').select(['from_value', 'to_value', 'observed_since']).execute();
    expect(h).toEqual([{ from_value: '19.99', to_value: '20.00', observed_since: '2024-05-01 09:00:00.000' }]);
    expect(await store.counts()).toMatchObject({ tickets: 1, deals: 1, ticket_messages: 2, deal_contacts: 2 });
    expect(await store.mirroredVersions('ticket')).toEqual(new Map([['t1', { updatedAt: '2024-05-01T09:00:00.000Z', deletedAt: null }]]));
  });

  it('dedupes events and never double counts a status change, in both orders', async () => {
    await store.transaction((tx) => upsertOne(tx, 'ticket', ticket(), SYNCED));
    const e1 = statusEvent('e1', 't1', 'open', 'pending', '2024-05-01T10:00:00Z');
    expect((await store.transaction((tx) => tx.insertEvents([e1], SYNCED))).newIds).toEqual(new Set(['e1']));
    expect((await store.transaction((tx) => tx.insertEvents([e1], SYNCED))).newIds).toEqual(new Set());
    await store.transaction((tx) => upsertOne(tx, 'ticket', ticket({ status: 'pending', updatedAt: '2024-05-01T11:00:00Z' }), SYNCED));
    await store.transaction((tx) => upsertOne(tx, 'ticket', ticket({ status: 'solved', updatedAt: '2024-05-01T12:00:00Z' }), SYNCED));
    await store.transaction((tx) => tx.insertEvents([statusEvent('e2', 't1', 'pending', 'solved', '2024-05-01T11:30:00Z')], SYNCED));
    const h = await databaseOf(store)
      .selectFrom('ticket_history')
      .select(['source', 'event_id'])
      .where('field', '=', 'status')
      .orderBy('changed_at')
      .execute();
    expect(h).toEqual([
      { source: 'event', event_id: 'e1' },
      { source: 'event', event_id: 'e2' },
    ]);
  });

  it('keeps the dirty set, state and quarantine rules', async () => {
    await store.transaction(async (tx) => {
      await tx.markDirty([
        { entityType: 'deal', entityId: 'd1', occurredAt: '2024-05-01T10:00:00Z' },
        { entityType: 'deal', entityId: 'd1', occurredAt: '2024-05-01T11:00:00Z' },
      ]);
      expect(await tx.bumpStaleRead('deal', 'd1')).toBe(1);
      await writeSyncState(tx, 'watermark', '2024-05-01T11:00:00.000Z');
      await tx.quarantine({ entityType: 'deal', entityId: null, reason: 'x', raw: [1] }, SYNCED);
    });
    expect(await store.listDirty(5)).toEqual([
      { entityType: 'deal', entityId: 'd1', occurredAt: '2024-05-01T11:00:00.000Z', staleReads: 1, readUnlisted: true },
    ]);
    expect(await store.transaction((tx) => tx.clearDirty('deal', 'd1', '2024-05-01T10:59:59Z'))).toBe(false);
    expect(await store.transaction((tx) => tx.clearDirty('deal', 'd1', '2024-05-01T11:00:00Z'))).toBe(true);
    expect(await readSyncState(store, 'watermark')).toBe('2024-05-01T11:00:00.000Z');
    const runId = await store.transaction((tx) => tx.startRun('sync', SYNCED));
    expect(typeof runId).toBe('number');
    expect((await store.counts()).quarantine).toBe(1);
  });

  it('takes an advisory writer lock: exclusive, waitable, and freed when its session dies', async () => {
    const other = await openStore({ database: url });
    try {
      const lock = await store.acquireWriterLock({ wait: false });
      await expect(other.acquireWriterLock({ wait: false })).rejects.toMatchObject({ code: 'LOCK_HELD' });
      let reportWaiting!: () => void;
      const waitingReported = new Promise<void>((resolve) => (reportWaiting = resolve));
      const pending = other.acquireWriterLock({ wait: true, pollMs: 50, onWaiting: reportWaiting });
      await waitingReported;
      // Kill the holder's session from the server side, as a crashed host would.
      // Only this test's database: other suites running beside it hold advisory locks of their own
      // (Kysely's migrator, their writers), and killing those made unrelated tests fail at random.
      await sql`select pg_terminate_backend(l.pid) from pg_locks l join pg_database d on d.oid = l.database
        where l.locktype = 'advisory' and l.granted and l.pid <> pg_backend_pid() and d.datname = current_database()`.execute(
        databaseOf(other),
      );
      const second = await pending;
      // The old holder learns of its dead session from its connection's error, on its own time.
      if (!lock.lost.aborted) await new Promise((resolve) => lock.lost.addEventListener('abort', resolve, { once: true }));
      expect(lock.lost.aborted).toBe(true);
      expect(second.lost.aborted).toBe(false);
      await lock.release();
      await second.release();
      expect(second.lost.aborted).toBe(false);
    } finally {
      await other.close();
    }
  });

  it('stores text with NUL characters (PostgreSQL cannot hold U+0000)', async () => {
    const bad = ticket({ subject: 'a\u0000b', fields: { k: 'x\u0000' }, tags: ['t\u0000'] });
    await store.transaction((tx) => upsertOne(tx, 'ticket', bad, SYNCED));
    const row = await databaseOf(store).selectFrom('tickets').select(['subject', 'raw_json']).executeTakeFirstOrThrow();
    expect(row.subject).toBe('a\uFFFDb');
    expect(JSON.parse(row.raw_json!).fields.k).toBe('x\uFFFD');
  });

  it('read-only stores cannot write', async () => {
    const ro = await openStore({ database: url, readonly: true });
    try {
      expect(await ro.migrate()).toEqual({ applied: [] });
      await expect(ro.transaction((tx) => writeSyncState(tx, 'k', 1))).rejects.toThrow(/read-only/);
    } finally {
      await ro.close();
    }
  });
});
