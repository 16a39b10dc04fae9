import { describe, expect, it } from 'vitest';
import { parseAmount, stageKey } from '../../src/store/index.js';
import { deal, SYNCED, useFreshStore, upsertOne } from './fixtures.js';
import { databaseOf } from '../../src/store/internal.js';

describe('parseAmount', () => {
  it('computes exact cents by string arithmetic', () => {
    expect(parseAmount('0.10')).toEqual({ amount: '0.10', cents: 10 });
    expect(parseAmount('19.99')).toEqual({ amount: '19.99', cents: 1999 });
    expect(parseAmount('1234567.89')).toEqual({ amount: '1234567.89', cents: 123456789 });
    expect(parseAmount(null)).toEqual({ amount: null, cents: null });
    expect(parseAmount('12.5')).toEqual({ amount: '12.50', cents: 1250 });
    expect(parseAmount('-0.01')).toEqual({ amount: '-0.01', cents: -1 });
    expect(parseAmount('-0.00')).toEqual({ amount: '0.00', cents: 0 });
    expect(parseAmount(19.99)).toEqual({ amount: '19.99', cents: 1999 });
    expect(parseAmount('0.105')).toEqual({ amount: '0.105', cents: 11 });
    expect(() => parseAmount('12,50')).toThrow(/not a decimal/);
  });
});

describe('a deal written by upsertRecords', () => {
  const { store } = useFreshStore();

  it('writes the deal with contacts, company, owner and a minimal stage/pipeline', async () => {
    expect(await store.knownStages()).toEqual(new Set());
    const r = await store.transaction((tx) => upsertOne(tx, 'deal', deal(), SYNCED));
    expect(r).toEqual({ history: 0, superseded: false, quarantined: false });
    const row = await databaseOf(store).selectFrom('deals').selectAll().executeTakeFirstOrThrow();
    expect(row).toMatchObject({
      amount: 1234.5,
      amount_cents: 123450,
      currency: 'EUR',
      close_date: '2024-06-30',
      status: 'open',
      pipeline_id: 'p1',
      stage_id: 's1',
      owner_id: 'u9',
      company_id: 'co1',
      created_at: '2024-05-01 09:00:00.000',
    });
    expect(await databaseOf(store).selectFrom('deal_contacts').selectAll().orderBy('position').execute()).toEqual([
      { deal_id: 'd1', contact_id: 'c1', is_primary: 0, position: 0 },
      { deal_id: 'd1', contact_id: 'c2', is_primary: 1, position: 1 },
    ]);
    expect(await databaseOf(store).selectFrom('companies').selectAll().execute()).toEqual([
      { id: 'co1', name: 'ACME', domain: 'acme.test' },
    ]);
    expect(await databaseOf(store).selectFrom('users').selectAll().execute()).toEqual([
      { id: 'u9', name: 'Owner', email: 'owner@example.com' },
    ]);
    expect(await store.knownStages()).toEqual(new Set([stageKey('p1', 's1')]));
    expect(await databaseOf(store).selectFrom('pipelines').select(['id', 'name']).execute()).toEqual([{ id: 'p1', name: 'Sales' }]);
    expect(await databaseOf(store).selectFrom('deal_fields').selectAll().execute()).toEqual([
      { deal_id: 'd1', key: 'source', value_text: 'web', value_json: '"web"' },
    ]);
    expect(await store.pipelineDealCounts()).toEqual(new Map([['p1', 1]]));
  });

  it('stores exact cents for null and tricky amounts', async () => {
    await store.transaction(async (tx) => {
      await upsertOne(tx, 'deal', deal({ id: 'a', amount: '0.10' }), SYNCED);
      await upsertOne(tx, 'deal', deal({ id: 'b', amount: '19.99' }), SYNCED);
      await upsertOne(tx, 'deal', deal({ id: 'c', amount: '1234567.89' }), SYNCED);
      await upsertOne(tx, 'deal', deal({ id: 'd', amount: null }), SYNCED);
    });
    const rows = await databaseOf(store).selectFrom('deals').select(['id', 'amount', 'amount_cents']).orderBy('id').execute();
    expect(rows).toEqual([
      { id: 'a', amount: 0.1, amount_cents: 10 },
      { id: 'b', amount: 19.99, amount_cents: 1999 },
      { id: 'c', amount: 1234567.89, amount_cents: 123456789 },
      { id: 'd', amount: null, amount_cents: null },
    ]);
  });

  it('quarantines a deal whose amount is not a decimal, keeping the stored copy', async () => {
    await store.transaction((tx) => upsertOne(tx, 'deal', deal(), SYNCED));
    const r = await store.transaction((tx) => upsertOne(tx, 'deal', deal({ amount: 'lots', updatedAt: '2024-06-01T00:00:00Z' }), SYNCED));
    expect(r).toEqual({ history: 0, superseded: false, quarantined: true });
    expect(await databaseOf(store).selectFrom('deals').select('amount').execute()).toEqual([{ amount: 1234.5 }]);
    expect(await databaseOf(store).selectFrom('quarantine').select(['entity_type', 'entity_id']).execute()).toEqual([
      { entity_type: 'deal', entity_id: 'd1' },
    ]);
    await store.transaction((tx) => upsertOne(tx, 'deal', deal({ updatedAt: '2024-06-02T00:00:00Z' }), SYNCED));
    expect((await store.counts()).quarantine).toBe(0);
  });

  it('replaces contacts and writes observed history for tracked fields', async () => {
    await store.transaction((tx) => upsertOne(tx, 'deal', deal(), SYNCED));
    const next = deal({
      amount: '2000.00',
      closeDate: null,
      status: 'won',
      owner: null,
      stage: { id: 's9', name: 'Won', position: 3, isWon: true, isLost: false },
      contacts: [{ id: 'c3', firstName: 'Cy', lastName: null, email: null, isPrimary: true }],
      updatedAt: '2024-05-02T09:00:00.000Z',
    });
    const r = await store.transaction((tx) => upsertOne(tx, 'deal', next, SYNCED));
    expect(r).toEqual({ history: 5, superseded: false, quarantined: false });
    const h = await databaseOf(store).selectFrom('deal_history').selectAll().orderBy('field').execute();
    expect(h.map((x) => [x.field, x.from_value, x.to_value])).toEqual([
      ['amount', '1234.50', '2000.00'],
      ['close_date', '2024-06-30', null],
      ['owner_id', 'u9', null],
      ['stage_id', 's1', 's9'],
      ['status', 'open', 'won'],
    ]);
    expect(h.every((x) => x.source === 'observed' && x.observed_since === '2024-05-01 09:00:00.000')).toBe(true);
    expect(await databaseOf(store).selectFrom('deal_contacts').select('contact_id').execute()).toEqual([{ contact_id: 'c3' }]);
    const stale = await store.transaction((tx) => upsertOne(tx, 'deal', deal(), SYNCED));
    expect(stale).toEqual({ history: 0, superseded: true, quarantined: false });
  });

  it('upsertPipelines writes pipelines and stages and counts mirrored deals', async () => {
    await store.transaction(async (tx) => {
      await tx.upsertPipelines([
        {
          id: 'p1',
          name: 'Sales',
          dealCount: 7,
          stages: [
            { id: 's1', name: 'Lead', position: 0, isWon: false, isLost: false },
            { id: 's2', name: 'Won', position: 1, isWon: true, isLost: false },
          ],
        },
        { id: 'p2', name: 'Renewals', dealCount: 0, stages: [] },
      ]);
      await upsertOne(tx, 'deal', deal(), SYNCED);
      await upsertOne(tx, 'deal', deal({ id: 'd2' }), SYNCED);
      await tx.markDeleted('deal', 'd2', SYNCED);
    });
    expect(await databaseOf(store).selectFrom('pipelines').select(['id', 'deal_count', 'position']).orderBy('id').execute()).toEqual([
      { id: 'p1', deal_count: 7, position: 0 },
      { id: 'p2', deal_count: 0, position: 1 },
    ]);
    expect(await databaseOf(store).selectFrom('stages').select(['id', 'is_won']).orderBy('id').execute()).toEqual([
      { id: 's1', is_won: 0 },
      { id: 's2', is_won: 1 },
    ]);
    expect(await store.pipelineDealCounts()).toEqual(
      new Map([
        ['p1', 1],
        ['p2', 0],
      ]),
    );
    const versions = await store.mirroredVersions('deal');
    expect(versions.get('d2')).toEqual({ updatedAt: '2024-05-01T09:00:00.000Z', deletedAt: SYNCED });
  });
});
