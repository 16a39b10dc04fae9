import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { loadMigrations } from '../../migrations/index.js';
import { openStore, StoreError } from '../../src/store/index.js';
import { useFreshStore } from './fixtures.js';
import { databaseOf } from '../../src/store/internal.js';
import { writeSyncState } from '../../src/store/sync-state.js';

const migrations = await loadMigrations();

// docs/design.md §5: the public contract, column by column.
const CONTRACT: Record<string, string[]> = {
  tickets: [
    'id',
    'number',
    'key',
    'subject',
    'status',
    'priority',
    'summary',
    'contact_id',
    'assignee_id',
    'team_id',
    'team_json',
    'tags_json',
    'fields_json',
    'cc_json',
    'message_count',
    'first_reply_due_at',
    'resolve_due_at',
    'first_reply_breached_at',
    'resolve_breached_at',
    'first_agent_reply_at',
    'resolved_at',
    'status_changed_at',
    'created_at',
    'updated_at',
    'deleted_at',
    'synced_at',
    'raw_json',
  ],
  ticket_messages: ['id', 'ticket_id', 'body', 'author_type', 'author_id', 'is_internal', 'attachments_json', 'created_at'],
  ticket_tags: ['ticket_id', 'tag'],
  ticket_fields: ['ticket_id', 'key', 'value_text', 'value_json'],
  users: ['id', 'name', 'email'],
  contacts: ['id', 'first_name', 'last_name', 'email'],
  companies: ['id', 'name', 'domain'],
  pipelines: ['id', 'name', 'deal_count', 'position'],
  stages: ['id', 'pipeline_id', 'name', 'position', 'is_won', 'is_lost'],
  deals: [
    'id',
    'name',
    'amount',
    'amount_cents',
    'currency',
    'close_date',
    'status',
    'pipeline_id',
    'stage_id',
    'owner_id',
    'company_id',
    'fields_json',
    'created_at',
    'updated_at',
    'deleted_at',
    'synced_at',
    'raw_json',
  ],
  deal_contacts: ['deal_id', 'contact_id', 'is_primary', 'position'],
  deal_fields: ['deal_id', 'key', 'value_text', 'value_json'],
  events: ['id', 'type', 'entity_type', 'entity_id', 'payload_json', 'actor_id', 'occurred_at', 'received_at'],
  ticket_history: ['ticket_id', 'field', 'from_value', 'to_value', 'changed_at', 'source', 'id', 'event_id', 'observed_since'],
  deal_history: ['deal_id', 'field', 'from_value', 'to_value', 'changed_at', 'source', 'id', 'event_id', 'observed_since'],
  quarantine: ['entity_type', 'entity_id', 'reason', 'raw_json', 'first_seen_at', 'last_seen_at'],
  sync_runs: [
    'id',
    'kind',
    'started_at',
    'finished_at',
    'outcome',
    'events_read',
    'events_new',
    'records_fetched',
    'requests',
    'retries',
    'error',
  ],
  sync_state: ['key', 'value_json', 'updated_at'],
  dirty: ['entity_type', 'entity_id', 'occurred_at', 'stale_reads', 'marked_at'],
};

describe('migrations', () => {
  const { store, dir } = useFreshStore();

  it('creates every contract table and column, timestamps declared DATETIME', async () => {
    for (const [table, columns] of Object.entries(CONTRACT)) {
      const info = await sql<{ name: string; type: string }>`select name, type from pragma_table_info(${table})`.execute(databaseOf(store));
      const byName = new Map(info.rows.map((r) => [r.name, r.type.toUpperCase()]));
      for (const c of columns) expect(byName.has(c), `${table}.${c}`).toBe(true);
      for (const [name, type] of byName) {
        if (/_at$|^observed_since$/.test(name)) expect(type, `${table}.${name}`).toBe('DATETIME');
      }
    }
    const deals = await sql<{ name: string; type: string }>`select name, type from pragma_table_info('deals')`.execute(databaseOf(store));
    const types = Object.fromEntries(deals.rows.map((r) => [r.name, r.type.toUpperCase()]));
    expect(types).toMatchObject({ amount: 'REAL', amount_cents: 'INTEGER', close_date: 'DATE' });
    for (const [table, column] of [
      ['ticket_messages', 'is_internal'],
      ['stages', 'is_won'],
      ['stages', 'is_lost'],
      ['deal_contacts', 'is_primary'],
    ]) {
      const cols = await sql<{ name: string; type: string }>`select name, type from pragma_table_info(${table})`.execute(databaseOf(store));
      expect(cols.rows.find((r) => r.name === column)?.type.toUpperCase(), `${table}.${column}`).toBe('BOOLEAN');
    }
  });

  it('is idempotent and applies nothing the second time', async () => {
    expect(await store.migrate()).toEqual({ applied: [] });
    await store.close();
    const again = await openStore({ database: join(dir(), 'nested', 'mirror.sqlite') });
    expect(await again.migrate()).toEqual({ applied: [] });
    await again.close();
  });

  it('reports the migration names on a fresh file and uses WAL', async () => {
    const other = await openStore({ database: join(dir(), 'other.sqlite') });
    expect(Object.keys(migrations)[0]).toBe('0001_mirror_tables');
    expect(await other.migrate()).toEqual({ applied: Object.keys(migrations) });
    const mode = await sql<{ journal_mode: string }>`pragma journal_mode`.execute(databaseOf(other));
    expect(mode.rows[0]?.journal_mode).toBe('wal');
    const fk = await sql<{ foreign_keys: number }>`pragma foreign_keys`.execute(databaseOf(other));
    expect(fk.rows[0]?.foreign_keys).toBe(1);
    await other.close();
  });

  it('read-only stores read, refuse pending migrations, and need an existing file', async () => {
    const ro = await openStore({ database: join(dir(), 'nested', 'mirror.sqlite'), readonly: true });
    expect(await ro.migrate()).toEqual({ applied: [] });
    expect((await ro.counts()).tickets).toBe(0);
    await ro.close();
    await expect(openStore({ database: join(dir(), 'missing.sqlite'), readonly: true })).rejects.toMatchObject({ code: 'OPEN_FAILED' });
    // Also once the writer has closed (its WAL files checkpointed away).
    await store.close();
    const late = await openStore({ database: join(dir(), 'nested', 'mirror.sqlite'), readonly: true });
    expect((await late.counts()).deals).toBe(0);
    await expect(late.transaction((tx) => writeSyncState(tx, 'k', 1))).rejects.toThrow(/readonly/i);
    await late.close();
  });

  it('fails with OPEN_FAILED, without the password, when PostgreSQL is unreachable', async () => {
    const err = await openStore({ database: 'postgres://u:secret@127.0.0.1:1/db' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreError);
    expect(err).toMatchObject({ code: 'OPEN_FAILED' });
    expect((err as Error).message).toContain('postgres://127.0.0.1:1/db');
    expect((err as Error).message).not.toContain('secret');
  });
});
