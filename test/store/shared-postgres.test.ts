import { afterAll, describe, expect, it } from 'vitest';
import { openSharedPostgres, openStore, type SharedPostgres, type Store } from '../../src/store/index.js';
import { databaseOf } from '../../src/store/internal.js';
import { SYNCED, deal, ticket, upsertOne } from './fixtures.js';
import { startPg, type PgServer } from './pg-cluster.js';

// A fleet worker's stores borrow one pool (src/store/postgres-shared.ts): each must see only its
// own schema whichever connection it is lent, and the writer lock must hold and free as a
// store's own does.
const server: PgServer | null = await startPg();

const count = async (store: Store, table: 'tickets' | 'deals') =>
  Number(
    (
      await databaseOf(store)
        .selectFrom(table)
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

describe.skipIf(!server)('stores of many schemas on one shared pool (PostgreSQL)', () => {
  const opened: Array<Store | SharedPostgres> = [];
  afterAll(async () => {
    for (const o of opened.reverse()) await ('close' in o ? o.close() : o.end()).catch(() => undefined);
    await server?.stop();
  });

  it('lends each store connections on its own schema, and a closed store leaves the pool to the others', async () => {
    const url = await server!.createDatabase();
    // Two connections for three stores: every connection serves more than one schema in turn.
    const shared = await openSharedPostgres(url, 2);
    opened.push(shared);
    const stores = await Promise.all(['wa', 'wb', 'wc'].map((schema) => openStore({ database: url, schema, shared })));
    opened.push(...stores);
    for (const s of stores) await s.migrate();
    for (let round = 0; round < 3; round++) {
      await Promise.all(
        stores.map((s, i) =>
          s.transaction(async (tx) => {
            if (i !== 1) await upsertOne(tx, 'ticket', ticket({ id: `t-${i}-${round}` }), SYNCED);
            if (i !== 0) await upsertOne(tx, 'deal', deal({ id: `d-${i}-${round}` }), SYNCED);
          }),
        ),
      );
    }
    expect(await Promise.all(stores.map((s) => count(s, 'tickets')))).toEqual([3, 0, 3]);
    expect(await Promise.all(stores.map((s) => count(s, 'deals')))).toEqual([0, 3, 3]);
    const ids = await databaseOf(stores[2]!).selectFrom('tickets').select('id').orderBy('id').execute();
    expect(ids.map((r) => r.id)).toEqual(['t-2-0', 't-2-1', 't-2-2']);
    await stores[0]!.close();
    expect(await count(stores[1]!, 'deals')).toBe(3);
    // A reader lent the same connections is held to read-only by the server, and a writer after it is not.
    const reader = await openStore({ database: url, schema: 'wb', shared, readonly: true });
    await expect(reader.transaction((tx) => upsertOne(tx, 'deal', deal({ id: 'never' }), SYNCED))).rejects.toThrow(/read-only/);
    await reader.close();
    await stores[1]!.transaction((tx) => upsertOne(tx, 'deal', deal({ id: 'after-reader' }), SYNCED));
    expect(await count(stores[1]!, 'deals')).toBe(4);
  });

  it('holds the writer lock against a store with its own connections, frees it on release, and lends the connection back', async () => {
    const url = await server!.createDatabase();
    const shared = await openSharedPostgres(url, 2);
    opened.push(shared);
    const mine = await openStore({ database: url, schema: 'wx', shared });
    const other = await openStore({ database: url, schema: 'wx' });
    const sibling = await openStore({ database: url, schema: 'wy', shared });
    opened.push(mine, other, sibling);
    const lock = await mine.acquireWriterLock({ wait: false });
    await expect(other.acquireWriterLock({ wait: false })).rejects.toMatchObject({ code: 'LOCK_HELD' });
    // Another schema's lock is its own, on the second connection.
    const siblingLock = await sibling.acquireWriterLock({ wait: false });
    await siblingLock.release();
    await lock.release();
    const theirs = await other.acquireWriterLock({ wait: false });
    await expect(mine.acquireWriterLock({ wait: false })).rejects.toMatchObject({ code: 'LOCK_HELD' });
    await theirs.release();
    // Ten takes on a pool of two: a lock that kept its connection would leave the eleventh waiting for ever.
    for (let i = 0; i < 10; i++) await (await mine.acquireWriterLock({ wait: false })).release();
    await mine.migrate();
    expect(await count(mine, 'tickets')).toBe(0);
    expect(lock.lost.aborted).toBe(false);
  });
});
