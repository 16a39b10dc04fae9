import { describe, expect, it } from 'vitest';
import { SYNCED, stored, ticket, useFreshStore, upsertOne } from './fixtures.js';
import { databaseOf } from '../../src/store/internal.js';

describe('a ticket written by upsertRecords', () => {
  const { store } = useFreshStore();

  it('writes the ticket, its children and references, with 23-char stored timestamps', async () => {
    const r = await store.transaction((tx) => upsertOne(tx, 'ticket', ticket(), SYNCED));
    expect(r).toEqual({ history: 0, superseded: false, quarantined: false });
    const row = await databaseOf(store).selectFrom('tickets').selectAll().where('id', '=', 't1').executeTakeFirstOrThrow();
    expect(row).toMatchObject({
      number: 1,
      key: '#1',
      status: 'open',
      contact_id: 'c1',
      assignee_id: 'u1',
      team_id: 'team1',
      team_name: 'Tier 1',
      first_reply_due_at: '2024-05-01 10:00:00.000',
      message_count: 2,
      deleted_at: null,
      synced_at: stored(SYNCED),
    });
    for (const v of [row.first_reply_due_at, row.created_at, row.updated_at, row.status_changed_at, row.synced_at]) {
      expect(v).toHaveLength(23);
    }
    expect(JSON.parse(row.raw_json!)).toMatchObject({ id: 't1', messages: [{ id: 'm1' }, { id: 'm2' }] });
    const fields = await databaseOf(store).selectFrom('ticket_fields').select(['key', 'value_text', 'value_json']).orderBy('key').execute();
    expect(fields).toEqual([
      { key: 'meta', value_text: null, value_json: '{"a":1}' },
      { key: 'plan', value_text: 'pro', value_json: '"pro"' },
      { key: 'seats', value_text: '12', value_json: '12' },
      { key: 'vip', value_text: 'true', value_json: 'true' },
    ]);
    const msgs = await databaseOf(store).selectFrom('ticket_messages').selectAll().orderBy('id').execute();
    expect(msgs.map((m) => [m.id, m.is_internal, m.author_id])).toEqual([
      ['m1', 0, null],
      ['m2', 1, 'u2'],
    ]);
    const users = await databaseOf(store).selectFrom('users').select('id').orderBy('id').execute();
    expect(users.map((u) => u.id)).toEqual(['u1', 'u2']);
    expect(await databaseOf(store).selectFrom('contacts').selectAll().execute()).toEqual([
      { id: 'c1', first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com' },
    ]);
  });

  it('replaces tags and fields, removes vanished messages, writes observed history', async () => {
    await store.transaction((tx) => upsertOne(tx, 'ticket', ticket(), SYNCED));
    const next = ticket({
      status: 'pending',
      priority: 'high',
      assignee: null,
      team: null,
      tags: ['urgent', 'billing', 'billing'],
      fields: { plan: 'free' },
      updatedAt: '2024-05-01T12:00:00.000Z',
      messages: [
        {
          id: 'm2',
          body: 'edited',
          authorType: 'agent',
          author: null,
          isInternal: true,
          attachments: [],
          createdAt: '2024-05-01T09:05:00.000Z',
        },
      ],
    });
    const r = await store.transaction((tx) => upsertOne(tx, 'ticket', next, SYNCED));
    expect(r).toEqual({ history: 4, superseded: false, quarantined: false });
    const tags = await databaseOf(store).selectFrom('ticket_tags').select('tag').orderBy('tag').execute();
    expect(tags.map((t) => t.tag)).toEqual(['billing', 'urgent']);
    const fields = await databaseOf(store).selectFrom('ticket_fields').select('key').execute();
    expect(fields.map((f) => f.key)).toEqual(['plan']);
    const msgs = await databaseOf(store).selectFrom('ticket_messages').select(['id', 'body']).execute();
    expect(msgs).toEqual([{ id: 'm2', body: 'edited' }]);
    const history = await databaseOf(store).selectFrom('ticket_history').selectAll().orderBy('field').execute();
    expect(history.map((h) => [h.field, h.from_value, h.to_value, h.source, h.changed_at, h.observed_since])).toEqual([
      ['assignee_id', 'u1', null, 'observed', '2024-05-01 12:00:00.000', '2024-05-01 09:00:00.000'],
      ['priority', 'normal', 'high', 'observed', '2024-05-01 12:00:00.000', '2024-05-01 09:00:00.000'],
      ['status', 'open', 'pending', 'observed', '2024-05-01 12:00:00.000', '2024-05-01 09:00:00.000'],
      ['team_id', 'team1', null, 'observed', '2024-05-01 12:00:00.000', '2024-05-01 09:00:00.000'],
    ]);
  });

  it('keeps the newer copy when a stale read arrives', async () => {
    await store.transaction((tx) => upsertOne(tx, 'ticket', ticket({ status: 'solved', updatedAt: '2024-05-01T12:00:00.000Z' }), SYNCED));
    const r = await store.transaction((tx) => upsertOne(tx, 'ticket', ticket({ status: 'open', tags: [] }), SYNCED));
    expect(r).toEqual({ history: 0, superseded: true, quarantined: false });
    const row = await databaseOf(store).selectFrom('tickets').select(['status', 'updated_at']).executeTakeFirstOrThrow();
    expect(row).toEqual({ status: 'solved', updated_at: '2024-05-01 12:00:00.000' });
    expect(await databaseOf(store).selectFrom('ticket_tags').select('tag').execute()).toHaveLength(2);
    expect(await databaseOf(store).selectFrom('ticket_history').selectAll().execute()).toHaveLength(0);
  });

  it('un-deletes on a later read, clears quarantine, and markDeleted(Many) keeps the first time', async () => {
    await store.transaction(async (tx) => {
      await upsertOne(tx, 'ticket', ticket(), SYNCED);
      await tx.markDeleted('ticket', 't1', '2024-05-03T00:00:00Z');
      await tx.markDeleted('ticket', 't1', '2024-05-04T00:00:00Z');
      await tx.markDeletedMany('ticket', ['t1', 'never-stored'], '2024-05-04T12:00:00Z');
    });
    let row = await databaseOf(store).selectFrom('tickets').select('deleted_at').executeTakeFirstOrThrow();
    expect(row.deleted_at).toBe('2024-05-03 00:00:00.000');
    await store.transaction(async (tx) => {
      await tx.quarantine({ entityType: 'ticket', entityId: 't1', reason: 'bad', raw: {} }, SYNCED);
      await upsertOne(tx, 'ticket', ticket({ updatedAt: '2024-05-05T00:00:00.000Z' }), SYNCED);
    });
    row = await databaseOf(store).selectFrom('tickets').select('deleted_at').executeTakeFirstOrThrow();
    expect(row.deleted_at).toBeNull();
    expect(await databaseOf(store).selectFrom('quarantine').selectAll().execute()).toEqual([]);
  });

  it('quarantines a record with a junk value instead of throwing, writing nothing else for it', async () => {
    await store.transaction(async (tx) => {
      const r = await upsertOne(tx, 'ticket', ticket({ id: 'bad', createdAt: 'yesterday' }), SYNCED);
      expect(r).toEqual({ history: 0, superseded: false, quarantined: true });
      await upsertOne(tx, 'ticket', ticket(), SYNCED);
    });
    const ids = await databaseOf(store).selectFrom('tickets').select('id').execute();
    expect(ids).toEqual([{ id: 't1' }]);
    const q = await databaseOf(store).selectFrom('quarantine').selectAll().execute();
    expect(q).toEqual([expect.objectContaining({ entity_type: 'ticket', entity_id: 'bad', reason: expect.stringMatching(/createdAt/) })]);
    expect(JSON.parse(q[0]!.raw_json)).toMatchObject({ id: 'bad', createdAt: 'yesterday' });
  });
});
