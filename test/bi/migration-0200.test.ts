import { Migrator, sql, type Kysely } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { loadMigrations } from '../../migrations/index.js';
import * as m0200 from '../../migrations/0200_bi_types.js';
import { openStore, type Store } from '../../src/store/index.js';
import { dialects } from '../helpers/dialects.js';
import { databaseOf } from '../../src/store/internal.js';

const migrations = await loadMigrations();

const STORED = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}$/;
const RAW = JSON.stringify({ id: 't1', createdAt: '2024-05-01T09:00:00.000Z' });

/** A mirror as the release before migration 0200 wrote it: 24-char ISO text, integer booleans, text amounts. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the tables as 0100 left them, which the live MirrorDatabase type no longer describes
async function writeOldMirror(db: Kysely<any>): Promise<void> {
  const iso = '2024-05-01T09:00:00.000Z';
  await db
    .insertInto('tickets')
    .values({
      id: 't1',
      status: 'open',
      created_at: iso,
      updated_at: '2024-05-01T10:30:00.250Z',
      synced_at: iso,
      raw_json: RAW,
    })
    .execute();
  await db
    .insertInto('ticket_messages')
    .values([
      { id: 'm1', ticket_id: 't1', is_internal: 1, created_at: iso, raw_json: '{}' },
      { id: 'm2', ticket_id: 't1', is_internal: 0, created_at: iso, raw_json: '{}' },
    ])
    .execute();
  await db.insertInto('pipelines').values({ id: 'p1', name: 'Sales' }).execute();
  await db.insertInto('stages').values({ id: 's1', pipeline_id: 'p1', name: 'Won', position: 0, is_won: 1, is_lost: 0 }).execute();
  await db
    .insertInto('deals')
    .values({
      id: 'd1',
      amount: '1234.50',
      amount_cents: 123450,
      currency: 'EUR',
      close_date: '2024-06-30',
      status: 'won',
      pipeline_id: 'p1',
      stage_id: 's1',
      created_at: iso,
      updated_at: iso,
      raw_json: '{"amount":"1234.50"}',
    })
    .execute();
  await db.insertInto('deal_contacts').values({ deal_id: 'd1', contact_id: 'c1', is_primary: 1, position: 0 }).execute();
  await db
    .insertInto('deal_fields')
    .values({ deal_id: 'd1', key: 'k', value_text: iso, value_json: JSON.stringify(iso) })
    .execute();
  await db
    .insertInto('events')
    .values({
      id: 'e1',
      type: 'ticket.status_changed',
      entity_type: 'ticket',
      entity_id: 't1',
      payload_json: '{"from":"new","to":"open"}',
      occurred_at: iso,
      received_at: iso,
      raw_json: JSON.stringify({ occurredAt: iso }),
    })
    .execute();
  await db
    .insertInto('ticket_history')
    .values({
      ticket_id: 't1',
      field: 'status',
      from_value: 'new',
      to_value: 'open',
      changed_at: iso,
      source: 'event',
      event_id: 'e1',
      observed_since: null,
    })
    .execute();
  await db.insertInto('sync_runs').values({ kind: 'sync', started_at: iso, finished_at: iso, outcome: 'success' }).execute();
  await db
    .insertInto('dirty')
    .values({ entity_type: 'ticket', entity_id: 't1', occurred_at: iso, stale_reads: 0, marked_at: iso })
    .execute();
  await db.insertInto('rpt_tickets').values({ ticket_id: 't1', created_at: iso, refreshed_at: iso }).execute();
}

for (const dialect of dialects)
  describe(`migration 0200 on a mirror written by the previous release (${dialect.name})`, () => {
    let store: Store | null = null;
    let drop: (() => Promise<void>) | null = null;
    afterEach(async () => {
      await store?.close();
      await drop?.();
      store = null;
    });

    it('converts every timestamp in place and re-types booleans and amounts, losing nothing', async () => {
      const target = await dialect.newDatabase();
      drop = target.drop;
      store = await openStore({ database: target.database });
      const migrator = new Migrator({ db: databaseOf(store), provider: { getMigrations: () => Promise.resolve(migrations) } });
      const to0100 = await migrator.migrateTo('0100_reporting');
      expect(to0100.error).toBeUndefined();
      await writeOldMirror(databaseOf(store));

      const to0200 = await migrator.migrateTo('0200_bi_types');
      expect(to0200.error).toBeUndefined();
      // Running it again (a process killed after the migration's transaction committed but before
      // the migrator recorded it) changes nothing: every check below runs on the twice-converted mirror.
      await m0200.up(databaseOf(store));
      expect((await store.migrate()).applied).toEqual([
        '0300_dirty_read_messages',
        '0400_live_updated_indexes',
        '0500_messages_author_covering',
        '0600_status_page_indexes',
        '0700_owner_keyed_children',
        '0800_dirty_failed_reads',
        '0900_history_gaps',
        '1000_current_as_of',
        '1100_sync_runs_cycles',
        '1600_writer_requests',
        '1700_custom_fields_versions_daily',
      ]);
      const db = databaseOf(store);
      const t = await db.selectFrom('tickets').selectAll().executeTakeFirstOrThrow();
      expect([t.created_at, t.updated_at, t.synced_at]).toEqual([
        '2024-05-01 09:00:00.000',
        '2024-05-01 10:30:00.250',
        '2024-05-01 09:00:00.000',
      ]);
      expect(JSON.parse(t.raw_json!)).toEqual(JSON.parse(RAW)); // jsonb re-spaces it in PostgreSQL
      const e = await db.selectFrom('events').selectAll().executeTakeFirstOrThrow();
      expect([e.occurred_at, e.received_at, JSON.parse(e.raw_json!)]).toEqual([
        '2024-05-01 09:00:00.000',
        '2024-05-01 09:00:00.000',
        { occurredAt: '2024-05-01T09:00:00.000Z' },
      ]);
      const f = await db.selectFrom('deal_fields').selectAll().executeTakeFirstOrThrow();
      expect(f.value_text).toBe('2024-05-01T09:00:00.000Z'); // user data, not a timestamp column
      const d = await db.selectFrom('deals').select(['amount', 'amount_cents', 'close_date', 'raw_json']).executeTakeFirstOrThrow();
      expect({ ...d, raw_json: JSON.parse(d.raw_json!) }).toEqual({
        amount: 1234.5,
        amount_cents: 123450,
        close_date: '2024-06-30',
        raw_json: { amount: '1234.50' },
      });
      // The child rows of deals survived (no table rebuild, so no ON DELETE CASCADE).
      const dc = await db.selectFrom('deal_contacts').select(['contact_id', 'is_primary']).execute();
      expect(dc.map((r) => [r.contact_id, Number(r.is_primary)])).toEqual([['c1', 1]]);
      const m = await db.selectFrom('ticket_messages').select(['id', 'is_internal']).orderBy('id').execute();
      expect(m.map((r) => Number(r.is_internal))).toEqual([1, 0]);
      const h = await db.selectFrom('ticket_history').select(['changed_at', 'event_id']).executeTakeFirstOrThrow();
      expect(h).toEqual({ changed_at: '2024-05-01 09:00:00.000', event_id: 'e1' });
      const dirty = await store.listDirty(10);
      expect(dirty[0]?.occurredAt).toBe('2024-05-01T09:00:00.000Z'); // the sync still sees ISO times
      const rpt = await sql<{
        created_at: string;
        running_since: string | null;
      }>`SELECT created_at, NULL AS running_since FROM rpt_tickets`.execute(db);
      expect(rpt.rows[0]?.created_at).toBe('2024-05-01 09:00:00.000');
      await sql`SELECT running_since FROM rpt_sync_health`.execute(db);

      if (dialect.name === 'sqlite') {
        const tables = await sql<{
          name: string;
        }>`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'kysely_%'`.execute(db);
        let checked = 0;
        for (const { name } of tables.rows) {
          const cols = await sql<{ name: string; type: string }>`SELECT name, type FROM pragma_table_info(${name})`.execute(db);
          for (const c of cols.rows) {
            if (c.type.toLowerCase() !== 'datetime') continue;
            const values = await sql<{
              v: unknown;
            }>`SELECT ${sql.ref(c.name)} AS v FROM ${sql.table(name)} WHERE ${sql.ref(c.name)} IS NOT NULL`.execute(db);
            for (const { v } of values.rows) {
              expect(String(v), `${name}.${c.name}`).toMatch(STORED);
              checked++;
            }
          }
        }
        expect(checked).toBeGreaterThanOrEqual(14);
        const types = async (table: string) =>
          Object.fromEntries(
            (await sql<{ name: string; type: string }>`SELECT name, type FROM pragma_table_info(${table})`.execute(db)).rows.map((r) => [
              r.name,
              r.type.toUpperCase(),
            ]),
          );
        expect(await types('deals')).toMatchObject({ amount: 'REAL', amount_cents: 'INTEGER', close_date: 'DATE', created_at: 'DATETIME' });
        expect(await types('stages')).toMatchObject({ is_won: 'BOOLEAN', is_lost: 'BOOLEAN' });
        expect(await types('ticket_messages')).toMatchObject({ is_internal: 'BOOLEAN' });
        expect(await types('deal_contacts')).toMatchObject({ is_primary: 'BOOLEAN' });
        const typeofAmount = await sql<{ t: string }>`SELECT typeof(amount) AS t FROM deals`.execute(db);
        expect(typeofAmount.rows[0]?.t).toBe('real');
      }

      // The migrated mirror keeps working: a new write lands in the new form next to the converted rows.
      await store.transaction((tx) => tx.markDeleted('ticket', 't1', '2024-05-02T00:00:00Z'));
      const after = await db.selectFrom('tickets').select('deleted_at').executeTakeFirstOrThrow();
      expect(after.deleted_at).toBe('2024-05-02 00:00:00.000');
    });
  });
