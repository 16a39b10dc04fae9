/**
 * A value too large for an index entry, in a first backfill: PostgreSQL's B-tree holds at most
 * 2,704 bytes per entry, and an upstream ticket status has no such bound (a tag neither, but the
 * tags' primary key holds it, and no backfill defers a primary key). A first backfill defers only
 * the indexes whose entries have a fixed size where entries are limited (docs/sync.md, "A first
 * backfill builds the secondary indexes at its end"): the status index stays, the row is refused
 * as it is written and only its record is quarantined, where a build at the end would fail the
 * whole backfill. A long value that compresses fits an entry and is stored. SQLite has no such
 * limit and stores both.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { openStore } from '../../src/store/index.js';
import { databaseOf } from '../../src/store/internal.js';
import { cliConfig } from '../cli/env.js';
import { dialects } from '../helpers/dialects.js';
import { tempDir } from '../helpers/tmp.js';
import { measure } from './cli.js';
import { KEY } from './mirror.js';
import { startHostile, type HostileUpstream } from './server.js';

for (const dialect of dialects)
  describe(`a ticket status too large for an index entry, in a first backfill (${dialect.name})`, () => {
    const closers: (() => Promise<void> | void)[] = [];
    afterEach(async () => {
      for (const close of closers.splice(0).reverse()) await close();
    });

    /**
     * A first backfill (the CLI) from an upstream that serves ticket `pick` of the seeded ones with
     * `status`; returns the ticket ids, the victim and where the mirror is.
     */
    async function backfillWithStatus(seed: number, pick: number, status: string) {
      const sim: Simulator = await startSimulator({ seed, tickets: 30, deals: 5, control: true, apiKeys: { [KEY]: '' } });
      closers.push(() => sim.close());
      const hostile: HostileUpstream = await startHostile(sim.url);
      closers.push(() => hostile.close());
      const { dir, cleanup } = tempDir();
      closers.push(cleanup);
      const target = await dialect.newDatabase();
      closers.push(target.drop);
      const ids = (sim.control.truth().tickets as { id: string }[]).map((t) => t.id);
      const victim = ids[pick]!;
      hostile.faults.rewrite = {
        record(kind, rec) {
          if (kind === 'ticket' && rec.id === victim) rec.status = status;
        },
      };
      const env = cliConfig(dir, { url: hostile.url, database: target.database, extra: { drainPlan: 'record' } });
      const r = await measure(['backfill'], env, dir);
      expect(r.code, r.stderr).toBe(0);
      return { sim, ids, victim, database: target.database };
    }

    it('quarantines only its ticket where the index refuses it, and the backfill ends with every index', async () => {
      // Random text does not compress: 6,000 characters stay far over 2,704 bytes in an index entry.
      const huge = randomBytes(3000).toString('hex');
      const { ids, victim, database } = await backfillWithStatus(61, 7, huge);

      const store = await openStore({ database, readonly: true });
      try {
        const db = databaseOf(store);
        const stored = (await db.selectFrom('tickets').select('id').execute()).map((t) => t.id).sort();
        const quarantined = await db.selectFrom('quarantine').select(['entity_id', 'reason']).execute();
        const status = await db.selectFrom('tickets').select('status').where('id', '=', victim).executeTakeFirst();
        if (store.capabilities.indexEntryBytes === null) {
          // SQLite: no entry limit; the status is stored whole.
          expect(stored).toEqual([...ids].sort());
          expect(status?.status).toBe(huge);
          expect(quarantined).toEqual([]);
        } else {
          expect(stored).toEqual(ids.filter((id) => id !== victim).sort());
          expect(quarantined.map((q) => q.entity_id)).toEqual([victim]);
          expect(quarantined[0]!.reason).toMatch(/the database refused this record \(54000\)/);
        }
        expect(await store.deferredIndexes()).toEqual([]);
        if (dialect.name === 'postgres') {
          const indexes = await sql<{ n: number }>`
            select count(*)::int as n from pg_indexes where schemaname = current_schema() and indexname = 'tickets_status_idx'`.execute(db);
          expect(indexes.rows[0]!.n).toBe(1);
        }
      } finally {
        await store.close();
      }
    }, 60_000);

    it('stores a long status that compresses into an entry', async () => {
      // 6,000 bytes of text, over any entry's limit as text, a few dozen compressed.
      const long = 'waiting on the customer; '.repeat(240);
      const { sim, ids, victim, database } = await backfillWithStatus(62, 4, long);

      const store = await openStore({ database, readonly: true });
      try {
        const db = databaseOf(store);
        const stored = (await db.selectFrom('tickets').select('id').execute()).map((t) => t.id).sort();
        const status = await db.selectFrom('tickets').select('status').where('id', '=', victim).executeTakeFirst();
        const messages = await db.selectFrom('ticket_messages').select('id').where('ticket_id', '=', victim).execute();
        const truth = (sim.control.truth().tickets as { id: string; messages?: unknown[] }[]).find((t) => t.id === victim)!;
        expect(stored).toEqual([...ids].sort());
        expect(status?.status).toBe(long);
        expect(messages).toHaveLength(truth.messages?.length ?? 0);
        expect(await db.selectFrom('quarantine').select('entity_id').execute()).toEqual([]);
        expect((await store.listDirty(100)).filter((d) => d.entityId === victim)).toEqual([]);
        expect(await store.deferredIndexes()).toEqual([]);
      } finally {
        await store.close();
      }
    }, 60_000);
  });
