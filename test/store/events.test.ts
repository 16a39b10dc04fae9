import { describe, expect, it } from 'vitest';
import { statusEvent, stored, SYNCED, ticket, useFreshStore, upsertOne } from './fixtures.js';
import { databaseOf } from '../../src/store/internal.js';

const RECEIVED = '2024-05-01T13:00:00.000Z';

describe('insertEvents and status history', () => {
  const { store } = useFreshStore();

  const history = () =>
    databaseOf(store)
      .selectFrom('ticket_history')
      .select(['field', 'from_value', 'to_value', 'changed_at', 'source', 'event_id'])
      .where('field', '=', 'status')
      .orderBy('changed_at')
      .execute();

  it('dedupes by id, reports new ids, upserts actors, normalises times', async () => {
    const events = [
      statusEvent('e1', 't1', 'open', 'pending', '2024-05-01T10:00:00Z'),
      {
        id: 'e2',
        type: 'contact.updated',
        entityType: 'contact',
        entityId: 'k1',
        payload: { x: 1 },
        actor: null,
        occurredAt: '2024-05-01T10:00:01.000Z',
        extra: 'kept',
      },
    ];
    const first = await store.transaction((tx) => tx.insertEvents(events, RECEIVED));
    expect(first.newIds).toEqual(new Set(['e1', 'e2']));
    const second = await store.transaction((tx) => tx.insertEvents([...events, events[0]!], RECEIVED));
    expect(second.newIds).toEqual(new Set());
    const rows = await databaseOf(store).selectFrom('events').selectAll().orderBy('id').execute();
    expect(rows.map((r) => [r.id, r.occurred_at, r.actor_id, r.received_at])).toEqual([
      ['e1', '2024-05-01 10:00:00.000', 'u1', stored(RECEIVED)],
      ['e2', '2024-05-01 10:00:01.000', null, stored(RECEIVED)],
    ]);
    expect(JSON.parse(rows[1]!.raw_json!)).toMatchObject({ extra: 'kept' });
    expect(await databaseOf(store).selectFrom('users').select('id').execute()).toEqual([{ id: 'u1' }]);
    expect(await history()).toHaveLength(1);
  });

  it('ignores status events without string from/to', async () => {
    const e = { ...statusEvent('e1', 't1', 'open', 'pending', '2024-05-01T10:00:00Z'), payload: { to: 'pending' } };
    await store.transaction((tx) => tx.insertEvents([e], RECEIVED));
    expect(await history()).toEqual([]);
  });

  it('event first: a later observed change told by the event is not written twice', async () => {
    await store.transaction((tx) => upsertOne(tx, 'ticket', ticket(), SYNCED));
    await store.transaction((tx) => tx.insertEvents([statusEvent('e1', 't1', 'open', 'pending', '2024-05-01T10:00:00.000Z')], RECEIVED));
    await store.transaction((tx) => upsertOne(tx, 'ticket', ticket({ status: 'pending', updatedAt: '2024-05-01T11:00:00.000Z' }), SYNCED));
    expect(await history()).toEqual([
      { field: 'status', from_value: 'open', to_value: 'pending', changed_at: '2024-05-01 10:00:00.000', source: 'event', event_id: 'e1' },
    ]);
  });

  it('observed first: a late-visible event replaces the observed row', async () => {
    await store.transaction((tx) => upsertOne(tx, 'ticket', ticket(), SYNCED));
    await store.transaction((tx) => upsertOne(tx, 'ticket', ticket({ status: 'pending', updatedAt: '2024-05-01T11:00:00.000Z' }), SYNCED));
    expect((await history()).map((h) => h.source)).toEqual(['observed']);
    await store.transaction((tx) => tx.insertEvents([statusEvent('e1', 't1', 'open', 'pending', '2024-05-01T10:00:00.000Z')], RECEIVED));
    expect(await history()).toEqual([
      { field: 'status', from_value: 'open', to_value: 'pending', changed_at: '2024-05-01 10:00:00.000', source: 'event', event_id: 'e1' },
    ]);
  });

  it('keeps an observed row when the event lies outside its interval or differs', async () => {
    await store.transaction((tx) => upsertOne(tx, 'ticket', ticket(), SYNCED));
    await store.transaction((tx) => upsertOne(tx, 'ticket', ticket({ status: 'pending', updatedAt: '2024-05-01T11:00:00.000Z' }), SYNCED));
    await store.transaction((tx) =>
      tx.insertEvents(
        [
          statusEvent('early', 't1', 'open', 'pending', '2024-05-01T08:00:00.000Z'),
          statusEvent('other', 't1', 'open', 'solved', '2024-05-01T10:00:00.000Z'),
        ],
        RECEIVED,
      ),
    );
    expect((await history()).map((h) => h.source)).toEqual(['event', 'event', 'observed']);
  });

  it('a chain of events explains an observed jump, in either order', async () => {
    const chain = [
      statusEvent('e1', 't1', 'open', 'pending', '2024-05-01T10:00:00.000Z'),
      statusEvent('e2', 't1', 'pending', 'solved', '2024-05-01T10:30:00.000Z'),
    ];
    await store.transaction((tx) => upsertOne(tx, 'ticket', ticket(), SYNCED));
    await store.transaction((tx) => tx.insertEvents(chain, RECEIVED));
    await store.transaction((tx) => upsertOne(tx, 'ticket', ticket({ status: 'solved', updatedAt: '2024-05-01T11:00:00.000Z' }), SYNCED));
    expect((await history()).map((h) => h.source)).toEqual(['event', 'event']);

    await store.transaction((tx) => upsertOne(tx, 'ticket', ticket({ id: 't2' }), SYNCED));
    await store.transaction((tx) =>
      upsertOne(tx, 'ticket', ticket({ id: 't2', status: 'solved', updatedAt: '2024-05-01T11:00:00.000Z' }), SYNCED),
    );
    const t2 = chain.map((e) => ({ ...e, id: `${e.id}-t2`, entityId: 't2' }));
    await store.transaction((tx) => tx.insertEvents([t2[1]!], RECEIVED));
    expect(await databaseOf(store).selectFrom('ticket_history').select('source').where('ticket_id', '=', 't2').execute()).toHaveLength(2);
    await store.transaction((tx) => tx.insertEvents([t2[0]!], RECEIVED));
    const rows = await databaseOf(store).selectFrom('ticket_history').select('source').where('ticket_id', '=', 't2').execute();
    expect(rows.map((r) => r.source)).toEqual(['event', 'event']);
  });
});
