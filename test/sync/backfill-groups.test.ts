import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Deal, Page } from '../../src/api/index.js';
import { openStore, type Store } from '../../src/store/index.js';
import { databaseOf } from '../../src/store/internal.js';
import { deal, SYNCED } from '../store/fixtures.js';
import { dialects } from '../helpers/dialects.js';
import { PHASES } from '../../src/sync/backfill-phases.js';

/**
 * A group of list pages is written with one upsert only where no record is on two of its pages;
 * otherwise page by page, so the outcome is always that of committing the pages one after another
 * (docs/sync.md, "Backfill"). A list that shifted can show a record invalid on one page and valid
 * on the next: written page by page, the good copy comes last and takes it out of quarantine.
 */
const dealsPhase = PHASES.find((p) => p.name === 'deals')!;

const page = (items: Deal[], invalid: Page<Deal>['invalid'] = []): Page<Deal> => ({ items, invalid, nextCursor: null });
const loaded = (items: Deal[]) => ({ copies: items, read: { ok: [], invalid: [], failed: [] } });

for (const dialect of dialects) {
  describe(`backfill page groups (${dialect.name})`, () => {
    let store: Store;
    let drop: () => Promise<void>;
    beforeEach(async () => {
      const db = await dialect.newDatabase();
      drop = db.drop;
      store = await openStore({ database: db.database });
      await store.migrate();
    });
    afterEach(async () => {
      await store.close();
      await drop();
    });

    const apply = (group: { page: Page<Deal>; items: Deal[] }[]) =>
      store.transaction((tx) =>
        dealsPhase.apply(
          tx,
          group.map((g) => ({ page: g.page, loaded: loaded(g.items) })),
          SYNCED,
          new Set(),
        ),
      );

    it('a record invalid on one page and valid on a later one of the same group ends mirrored, not quarantined', async () => {
      const good = deal({ id: 'd1' });
      const bad = { entityType: 'deal', id: 'd1', reason: 'amount: expected a number', raw: { id: 'd1' } };
      const counts = await apply([
        { page: page([], [bad]), items: [] },
        { page: page([good, deal({ id: 'd2' })]), items: [good, deal({ id: 'd2' })] },
      ]);
      expect(counts).toEqual([
        { copied: 0, quarantined: 1 },
        { copied: 2, quarantined: 0 },
      ]);
      const deals = await databaseOf(store).selectFrom('deals').select('id').orderBy('id').execute();
      expect(deals.map((d) => d.id)).toEqual(['d1', 'd2']);
      expect(await store.quarantinedIds('deal', ['d1', 'd2'])).toEqual(new Set());
    });

    it('pages with distinct records are written together, with a count per page', async () => {
      const counts = await apply([
        { page: page([deal({ id: 'd1' })]), items: [deal({ id: 'd1' })] },
        {
          page: page([deal({ id: 'd2' }), deal({ id: 'd3' })], [{ entityType: 'deal', id: 'd9', reason: 'bad', raw: {} }]),
          items: [deal({ id: 'd2' }), deal({ id: 'd3' })],
        },
      ]);
      expect(counts).toEqual([
        { copied: 1, quarantined: 0 },
        { copied: 2, quarantined: 1 },
      ]);
      expect(await store.quarantinedIds('deal', ['d9'])).toEqual(new Set(['d9']));
    });
  });
}
