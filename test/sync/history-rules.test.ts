import { describe, expect, it } from 'vitest';
import type { WorkspaceEvent } from '../../src/api/index.js';
import { deal, SYNCED, useFreshStore, upsertOne } from '../store/fixtures.js';
import { databaseOf } from '../../src/store/internal.js';

const event = (id: string, type: string, payload: unknown, occurredAt: string): WorkspaceEvent =>
  ({ id, type, entityType: 'deal', entityId: 'd1', payload, actor: null, occurredAt }) as WorkspaceEvent;

/** The history rules docs/sync.md lists, on the store directly, for the fields beyond ticket status. */
describe('deal history from the change log and from re-reads', () => {
  const { store } = useFreshStore();
  const history = () =>
    databaseOf(store)
      .selectFrom('deal_history')
      .select(['field', 'from_value', 'to_value', 'changed_at', 'source', 'event_id'])
      .orderBy('changed_at')
      .orderBy('field')
      .execute();
  const stages = () =>
    store.transaction((tx) =>
      tx.upsertPipelines([
        {
          id: 'p1',
          name: 'Sales',
          dealCount: 1,
          stages: [
            { id: 's1', name: 'Lead', position: 0, isWon: false, isLost: false },
            { id: 's2', name: 'Won', position: 1, isWon: true, isLost: false },
          ],
        },
      ]),
    );

  it('a stage move tells the stage and the status; amount, close date and owner come from deal.updated; the re-read adds nothing', async () => {
    await stages();
    await store.transaction((tx) => upsertOne(tx, 'deal', deal(), SYNCED));
    await store.transaction((tx) =>
      tx.insertEvents(
        [
          event('e2', 'deal.stage_changed', { from: 's1', to: 's2' }, '2024-05-01T11:00:00.000Z'),
          event(
            'e1',
            'deal.updated',
            {
              amount: { from: '1234.50', to: '2000' },
              closeDate: { from: '2024-06-30', to: null },
              ownerId: { from: 'u9', to: null },
              name: { from: 'a', to: 'b' },
            },
            '2024-05-01T10:00:00.000Z',
          ),
        ],
        SYNCED,
      ),
    );
    const told = [
      {
        field: 'amount',
        from_value: '1234.50',
        to_value: '2000.00',
        changed_at: '2024-05-01 10:00:00.000',
        source: 'event',
        event_id: 'e1',
      },
      {
        field: 'close_date',
        from_value: '2024-06-30',
        to_value: null,
        changed_at: '2024-05-01 10:00:00.000',
        source: 'event',
        event_id: 'e1',
      },
      { field: 'owner_id', from_value: 'u9', to_value: null, changed_at: '2024-05-01 10:00:00.000', source: 'event', event_id: 'e1' },
      { field: 'stage_id', from_value: 's1', to_value: 's2', changed_at: '2024-05-01 11:00:00.000', source: 'event', event_id: 'e2' },
      { field: 'status', from_value: 'open', to_value: 'won', changed_at: '2024-05-01 11:00:00.000', source: 'event', event_id: 'e2' },
    ];
    expect(await history()).toEqual(told);
    // The re-read sees every one of those changes at once; the events explain them all.
    const r = await store.transaction((tx) =>
      upsertOne(
        tx,
        'deal',
        deal({
          amount: '2000.00',
          closeDate: null,
          owner: null,
          status: 'won',
          updatedAt: '2024-05-01T11:00:00.000Z',
          stage: { id: 's2', name: 'Won', position: 1, isWon: true, isLost: false },
        }),
        SYNCED,
      ),
    );
    expect(r.history).toBe(0);
    expect(await history()).toEqual(told);
    // A lookback re-read of the same events writes nothing twice.
    await store.transaction((tx) =>
      tx.insertEvents([event('e2', 'deal.stage_changed', { from: 's1', to: 's2' }, '2024-05-01T11:00:00.000Z')], SYNCED),
    );
    expect(await history()).toEqual(told);
  });

  it('a payload that is not {from, to} writes no row; the re-read observes the change instead', async () => {
    await stages();
    await store.transaction((tx) => upsertOne(tx, 'deal', deal(), SYNCED));
    await store.transaction((tx) =>
      tx.insertEvents(
        [
          event('e1', 'deal.updated', { amount: 2000 }, '2024-05-01T10:00:00.000Z'),
          event('e2', 'deal.updated', { amount: { from: '1234.50', to: 'lots' } }, '2024-05-01T10:01:00.000Z'),
          event('e3', 'deal.stage_changed', { to: 's2' }, '2024-05-01T10:02:00.000Z'),
          event('e4', 'deal.stage_changed', 's2', '2024-05-01T10:03:00.000Z'),
          event('e5', 'deal.updated', null, '2024-05-01T10:04:00.000Z'),
        ],
        SYNCED,
      ),
    );
    expect(await history()).toEqual([]);
    await store.transaction((tx) =>
      upsertOne(
        tx,
        'deal',
        deal({
          amount: '2000.00',
          status: 'won',
          updatedAt: '2024-05-01T11:00:00.000Z',
          stage: { id: 's2', name: 'Won', position: 1, isWon: true, isLost: false },
        }),
        SYNCED,
      ),
    );
    expect((await history()).map((h) => [h.field, h.from_value, h.to_value, h.changed_at, h.source])).toEqual([
      ['amount', '1234.50', '2000.00', '2024-05-01 11:00:00.000', 'observed'],
      ['stage_id', 's1', 's2', '2024-05-01 11:00:00.000', 'observed'],
      ['status', 'open', 'won', '2024-05-01 11:00:00.000', 'observed'],
    ]);
  });

  it('a late-visible stage event replaces the observed stage and status rows', async () => {
    await stages();
    await store.transaction((tx) => upsertOne(tx, 'deal', deal(), SYNCED));
    await store.transaction((tx) =>
      upsertOne(
        tx,
        'deal',
        deal({
          status: 'won',
          updatedAt: '2024-05-01T11:00:00.000Z',
          stage: { id: 's2', name: 'Won', position: 1, isWon: true, isLost: false },
        }),
        SYNCED,
      ),
    );
    expect((await history()).map((h) => h.source)).toEqual(['observed', 'observed']);
    await store.transaction((tx) =>
      tx.insertEvents([event('e1', 'deal.stage_changed', { from: 's1', to: 's2' }, '2024-05-01T10:30:00.000Z')], SYNCED),
    );
    expect((await history()).map((h) => [h.field, h.changed_at, h.source])).toEqual([
      ['stage_id', '2024-05-01 10:30:00.000', 'event'],
      ['status', '2024-05-01 10:30:00.000', 'event'],
    ]);
  });
});
