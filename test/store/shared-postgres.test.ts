import { afterAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
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

  it("runs a lock holder's statements on the lock's connection, and gives each schema its home connection", async () => {
    const url = await server!.createDatabase();
    const shared = await openSharedPostgres(url, 4);
    opened.push(shared);
    const pid = async (store: Store) =>
      Number((await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(databaseOf(store))).rows[0]!.pid);
    const lockPid = async (store: Store) =>
      Number(
        (
          await sql<{
            pid: number;
          }>`select pid from pg_locks join pg_database d on d.oid = database where d.datname = current_database() and locktype = 'advisory' and granted and pid <> pg_backend_pid()`.execute(
            databaseOf(store),
          )
        ).rows[0]?.pid ?? -1,
      );
    const schemas = ['h1', 'h2', 'h3', 'h4', 'h5', 'h6'];
    const homes = new Map<string, number>();
    for (const schema of schemas) {
      const store = await openStore({ database: url, schema, shared });
      await store.migrate();
      homes.set(schema, await pid(store));
      await store.close();
    }
    // Six schemas on four connections: each is lent its home again, whatever ran in between.
    for (const schema of [...schemas].reverse()) {
      const store = await openStore({ database: url, schema, shared });
      expect(await pid(store), schema).toBe(homes.get(schema));
      await store.close();
    }
    expect(new Set(homes.values()).size).toBeGreaterThan(1);
    // While the lock is held, statements run on its session (the lock's pid is theirs), and a
    // second statement at once gets another connection instead of waiting for the first.
    const writer = await openStore({ database: url, schema: 'h1', shared });
    opened.push(writer);
    const lock = await writer.acquireWriterLock({ wait: false });
    const probe = await openStore({ database: url, schema: 'h2', shared });
    opened.push(probe);
    const holder = await lockPid(probe);
    expect(await pid(writer)).toBe(holder);
    const atOnce = await databaseOf(writer)
      .transaction()
      .execute(async (trx) => {
        const inside = Number((await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx)).rows[0]!.pid);
        return [inside, await pid(writer)];
      });
    expect(atOnce[0]).toBe(holder);
    expect(atOnce[1]).not.toBe(holder);
    await lock.release();
    expect(await lockPid(probe)).toBe(-1);
    // The connection went back to the pool: four slots, four stores, none waits.
    const four = await Promise.all(['h3', 'h4', 'h5', 'h6'].map((schema) => openStore({ database: url, schema, shared })));
    opened.push(...four);
    await Promise.all(four.map((s) => pid(s)));
  });
});
