import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { dialects } from '../helpers/dialects.js';
import { useDialectStore } from './fixtures.js';
import { databaseOf } from '../../src/store/internal.js';
import { capabilitiesOf } from '../../src/store/dialect.js';

// Index builds and full rpt_ rebuilds bound the memory of their sorts in wsmirror's own process
// (src/store/dialect.ts, boundSortMemory): the bound holds inside, and the connection's setting
// comes back after, also when the work fails.
for (const dialect of dialects) {
  describe(`boundSortMemory (${dialect.name})`, () => {
    const store = useDialectStore(dialect);

    // SQLite's sorter spills past the main database's cache_size; PostgreSQL sorts in its server.
    const cacheSize = async (): Promise<number | null> => {
      if (store.dialect !== 'sqlite') return null;
      const { rows } = await sql<{ cache_size: number }>`pragma cache_size`.execute(databaseOf(store));
      return rows[0]!.cache_size;
    };

    it('bounds the sort memory inside the work and puts the setting back after, also on a failure', async () => {
      const db = databaseOf(store);
      const before = await cacheSize();
      const inside = await capabilitiesOf(db).boundSortMemory(db, 4096, async () => {
        await sql`select 1`.execute(db);
        return cacheSize();
      });
      expect(inside).toBe(store.dialect === 'sqlite' ? -4096 : null);
      expect(await cacheSize()).toBe(before);
      await expect(
        capabilitiesOf(db).boundSortMemory(db, 2048, async () => {
          expect(await cacheSize()).toBe(store.dialect === 'sqlite' ? -2048 : null);
          throw new Error('the build failed');
        }),
      ).rejects.toThrow('the build failed');
      expect(await cacheSize()).toBe(before);
      if (store.dialect === 'sqlite') expect(before).toBeLessThan(-4096);
    });
  });
}
