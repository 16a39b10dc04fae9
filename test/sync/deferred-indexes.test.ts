import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import { sql } from 'kysely';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import type { StatusReport } from '../../src/cli/commands/status.js';
import { openStore } from '../../src/store/index.js';
import { emptyStats, runBackfill } from '../../src/sync/index.js';
import { runCli } from '../helpers/cli.js';
import { dialects } from '../helpers/dialects.js';
import { harness as makeHarness, type Harness } from './harness.js';
import { databaseOf } from '../../src/store/internal.js';
import { readSyncState } from '../../src/store/sync-state.js';

/**
 * A first backfill drops the record tables' secondary indexes and builds them once at its end
 * (docs/sync.md, "Backfill"); whatever happens, a stop, a kill, the mirror ends with every index
 * it had.
 */
for (const dialect of dialects)
  describe(`indexes around a first backfill on ${dialect.name}`, () => {
    let h: Harness | null = null;
    const readers: Database.Database[] = [];
    afterEach(async () => {
      for (const r of readers.splice(0)) r.close();
      await h?.close();
      h = null;
    });

    /** name → definition of every index made by CREATE INDEX (constraints' own indexes left out). */
    async function indexes(hh: Pick<Harness, 'store'>): Promise<Map<string, string>> {
      const rows =
        dialect.name === 'sqlite'
          ? await sql<{
              name: string;
              def: string;
            }>`select name, sql as def from sqlite_master where type = 'index' and sql is not null`.execute(databaseOf(hh.store))
          : await sql<{
              name: string;
              def: string;
            }>`select indexname as name, indexdef as def from pg_indexes where schemaname = current_schema()`.execute(databaseOf(hh.store));
      return new Map(rows.rows.map((r) => [r.name, r.def]));
    }

    /** PostgreSQL: name → oid of each index; an index dropped and built again has a new one. */
    async function indexOids(hh: Harness): Promise<Map<string, number>> {
      const rows = await sql<{ name: string; oid: number }>`
        select c.relname as name, c.oid::int8 as oid from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where c.relkind = 'i' and n.nspname = current_schema()`.execute(databaseOf(hh.store));
      return new Map(rows.rows.map((r) => [r.name, Number(r.oid)]));
    }

    /** Index names seen by a second connection while a ticket page has just committed (SQLite only: read synchronously). */
    function watchTicketPages(hh: Harness, then: () => void = () => {}): { seen: Set<string>[] } {
      const seen: Set<string>[] = [];
      const reader = dialect.name === 'sqlite' ? new Database(hh.database, { readonly: true }) : null;
      if (reader) readers.push(reader);
      onTicketPage = () => {
        if (reader) {
          const rows = reader.prepare("select name from sqlite_master where type = 'index' and sql is not null").all() as {
            name: string;
          }[];
          seen.push(new Set(rows.map((r) => r.name)));
        }
        then();
      };
      return { seen };
    }

    let onTicketPage = () => {};
    async function setup(tickets = 120): Promise<Harness> {
      onTicketPage = () => {};
      const hooks = { onPage: (kind: string) => (kind === 'tickets' ? onTicketPage() : undefined) };
      h = await makeHarness({ sim: { seed: 31, tickets, deals: 30 }, pageSize: 20, dialect, hooks });
      return h;
    }

    it('builds them once at the end of a first backfill, a user index included, and mirrors exactly', async () => {
      const hh = await setup();
      await sql`create index tickets_subject_user_idx on tickets (subject)`.execute(databaseOf(hh.store));
      const before = await indexes(hh);
      const oids = dialect.name === 'postgres' ? await indexOids(hh) : null;
      const { seen } = watchTicketPages(hh);
      await hh.backfill();
      expect(await indexes(hh)).toEqual(before);
      expect(await readSyncState(hh.store, 'deferred_indexes')).toBeUndefined();
      expect(await hh.diff()).toEqual([]);
      if (oids) {
        // Dropped and built again: a new oid for the deferred ones, the same for what stayed.
        const after = await indexOids(hh);
        const rebuilt = [...oids].filter(([name, oid]) => after.get(name) !== oid).map(([name]) => name);
        // Only indexes of fixed-width entries (indexEntryBytes): a text value could fail their build.
        for (const name of ['tickets_updated_at_idx', 'tickets_deleted_created_idx', 'deals_deleted_updated_idx'])
          expect(rebuilt, name).toContain(name);
        for (const name of ['tickets_status_idx', 'ticket_messages_author_cover_idx', 'deals_stage_idx', 'tickets_subject_user_idx'])
          expect(rebuilt, name).not.toContain(name);
        expect(rebuilt).not.toContain('events_occurred_at_idx');
        expect(rebuilt.filter((n) => n.endsWith('_pkey'))).toEqual([]);
      }
      if (dialect.name === 'sqlite') {
        expect(seen.length).toBeGreaterThan(1);
        for (const during of seen) {
          for (const name of [
            'tickets_status_idx',
            'ticket_messages_author_cover_idx',
            'ticket_messages_ticket_created_idx',
            'deals_stage_idx',
            'tickets_subject_user_idx',
          ])
            expect(during.has(name), name).toBe(false);
          expect(during.has('events_occurred_at_idx')).toBe(true);
        }
      }
    });

    // SQLite's plans: PostgreSQL's planner may choose either way on tables this small.
    if (dialect.name === 'sqlite')
      it('leaves the reads by ticket id of stored messages a search of the primary key while they are dropped', async () => {
        const hh = await setup();
        expect(await hh.store.deferIndexes()).toBeGreaterThan(0);
        const db = databaseOf(hh.store);
        // A ticket listed twice during the copy has its stored messages read (children.ts), and a
        // deleted ticket cascades to its messages: neither may scan every message.
        for (const read of [
          `select "ticket_id", "id", "body" from "ticket_messages" where "ticket_id" in ('a', 'b')`,
          `delete from "tickets" where "id" = 'a'`,
        ]) {
          const plan = await sql.raw<{ detail: string }>(`explain query plan ${read}`).execute(db);
          const messages = plan.rows.map((r) => r.detail).filter((d) => d.includes('ticket_messages'));
          expect(messages, read).toEqual([
            expect.stringMatching(/^SEARCH ticket_messages USING (COVERING )?INDEX sqlite_autoindex_ticket_messages_1 \(ticket_id=\?\)$/),
          ]);
        }
        expect(await hh.store.restoreIndexes()).toBeGreaterThan(0);
      });

    // SQLite in WAL mode never makes the writer wait on a reader.
    if (dialect.name === 'postgres')
      it('keeps them when a reader holds a table open, instead of waiting for it', async () => {
        const hh = await setup();
        const before = await indexes(hh);
        const reader = new pg.Client({ connectionString: hh.database });
        await reader.connect();
        try {
          // A BI query's open transaction: DROP INDEX on tickets would wait for it to end.
          await reader.query('begin');
          await reader.query('select count(*) from tickets');
          expect(await hh.store.deferIndexes()).toBe(0);
          expect(await indexes(hh)).toEqual(before);
          expect(await readSyncState(hh.store, 'deferred_indexes')).toBeUndefined();
        } finally {
          await reader.query('rollback');
          await reader.end();
        }
        await hh.backfill();
        expect(await hh.diff()).toEqual([]);
      });

    it('keeps them through a backfill of a mirror that already holds records', async () => {
      const hh = await setup();
      await hh.backfill();
      const before = await indexes(hh);
      const oids = dialect.name === 'postgres' ? await indexOids(hh) : null;
      expect(await hh.store.deferIndexes()).toBe(0);
      const { seen } = watchTicketPages(hh);
      await hh.backfill();
      if (dialect.name === 'sqlite') expect(seen.length).toBeGreaterThan(1);
      for (const during of seen) expect([...before.keys()].filter((n) => !during.has(n))).toEqual([]);
      expect(await indexes(hh)).toEqual(before);
      if (oids) expect(await indexOids(hh)).toEqual(oids);
    });

    it('builds them when the backfill stops half way', async () => {
      // 15 ticket pages: SQLite commits up to 10 in one transaction, so the stop lands between groups.
      const hh = await setup(300);
      const before = await indexes(hh);
      const stop = new AbortController();
      const { seen } = watchTicketPages(hh, () => stop.abort());
      const state = await runBackfill({ ...hh.ctx, stopSignal: stop.signal }, emptyStats());
      expect(state.phase).toBe('tickets');
      if (dialect.name === 'sqlite') expect(seen[0]?.has('tickets_status_idx')).toBe(false);
      expect(await indexes(hh)).toEqual(before);
      expect(await readSyncState(hh.store, 'deferred_indexes')).toBeUndefined();
      // The resumed backfill finds records and keeps them; the mirror ends exact.
      await hh.backfill();
      expect(await indexes(hh)).toEqual(before);
      expect(await hh.diff()).toEqual([]);
    });

    it('builds them when the copy fails, and reports the copy error', async () => {
      const hh = await setup(300);
      const before = await indexes(hh);
      watchTicketPages(hh, () => {
        throw new Error('the copy broke');
      });
      await expect(runBackfill(hh.ctx, emptyStats())).rejects.toThrow('the copy broke');
      expect(await indexes(hh)).toEqual(before);
      expect(await readSyncState(hh.store, 'deferred_indexes')).toBeUndefined();
    });

    it('defers no index a value could make too large for an entry, so a killed backfill never leaves one that cannot be built', async () => {
      const hh = await setup();
      const before = await indexes(hh);
      expect(await hh.store.deferIndexes()).toBeGreaterThan(3);
      // What a killed backfill may leave: a copy whose status no B-tree entry holds (random text does not compress).
      const victim = await hh.client.getTicket((hh.sim.control.truth().tickets as { id: string }[])[3]!.id);
      const huge = randomBytes(3000).toString('hex');
      const [verdict] = await hh.store.transaction((tx) =>
        tx.upsertRecords('ticket', [{ ...victim, status: huge }], new Date().toISOString()),
      );
      const limited = hh.store.capabilities.indexEntryBytes !== null;
      // Where entries are limited, the status index stayed and refused the row; elsewhere it is stored.
      expect(verdict!.quarantined).toBe(limited);
      const again = await openStore({ database: hh.database });
      try {
        await again.migrate();
        expect(await indexes({ store: again })).toEqual(before);
        const status = await databaseOf(again).selectFrom('tickets').select('status').where('id', '=', victim.id).executeTakeFirst();
        expect(status?.status).toBe(limited ? undefined : huge);
      } finally {
        await again.close();
      }
    });

    it('a writer that opens a mirror left without them (a killed backfill) builds them before it migrates', async () => {
      const hh = await setup();
      const before = await indexes(hh);
      const dropped = await hh.store.deferIndexes();
      expect(dropped).toBeGreaterThan(3);
      expect((await indexes(hh)).size).toBe(before.size - dropped);
      // What a kill leaves: the definitions saved, the indexes gone. `status` (a reader) says so.
      const status = async () => {
        const json = await runCli(['status', '--json', '--database', hh.database], {});
        const text = await runCli(['status', '--database', hh.database], {});
        expect(json.code, json.stderr).toBe(0);
        return { deferred: (JSON.parse(json.stdout) as StatusReport).deferredIndexes, text: text.stdout };
      };
      const left = await status();
      expect(left.deferred).toHaveLength(dropped);
      expect(left.deferred).toContain('tickets_updated_at_idx');
      expect(left.text).toMatch(new RegExp(`^Indexes: +${dropped} secondary index\\(es\\) dropped for the first backfill`, 'm'));
      // Then a new writer starts.
      const again = await openStore({ database: hh.database });
      try {
        await again.migrate();
        expect(await indexes({ store: again })).toEqual(before);
        expect(await readSyncState(again, 'deferred_indexes')).toBeUndefined();
        // And once more: nothing left to do.
        expect(await again.restoreIndexes()).toBe(0);
      } finally {
        await again.close();
      }
      const built = await status();
      expect(built.deferred).toEqual([]);
      expect(built.text).not.toMatch(/^Indexes:/m);
    });
  });
