import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { databaseOf } from '../../src/store/internal.js';
import { upsertContacts, upsertUsers } from '../../src/store/refs.js';
import { dialects } from '../helpers/dialects.js';
import { useDialectStore } from './fixtures.js';

/** Text that array literals, COPY and SQL all treat specially. */
const odd = (i: number) => [`"q${i}"`, `back\\slash${i}`, `{b,${i}}`, 'NULL', '', `tab\t${i}\nline`, `é☃${i}`][i % 7]!;

/** References of a batch: many rows, one statement where the dialect binds arrays (src/store/sql.ts). */
for (const dialect of dialects) {
  describe(`references (${dialect.name})`, () => {
    const store = useDialectStore(dialect);

    const users = async () => await databaseOf(store).selectFrom('users').select(['id', 'name', 'email']).orderBy('id').execute();

    it('stores any text as given, and a later null never erases a known value', async () => {
      const n = 1500;
      const first = Array.from({ length: n }, (_, i) => ({ id: `u${i}`, name: odd(i), email: i % 3 ? null : `e${i}@x` }));
      await upsertUsers(databaseOf(store), first);
      const expected = first.map((u) => ({ ...u })).sort((a, b) => (a.id < b.id ? -1 : 1));
      expect(await users()).toEqual(expected);

      const second = first.map((u, i) => ({ id: u.id, name: i % 2 ? null : `new${i}`, email: `later${i}@x` }));
      await upsertUsers(databaseOf(store), [...second, null, undefined]);
      const merged = first
        .map((u, i) => ({ id: u.id, name: i % 2 ? u.name : `new${i}`, email: `later${i}@x` }))
        .sort((a, b) => (a.id < b.id ? -1 : 1));
      expect(await users()).toEqual(merged);

      await upsertContacts(databaseOf(store), [{ id: 'c1', firstName: odd(0), lastName: null, email: odd(3) }]);
      const contacts = await databaseOf(store).selectFrom('contacts').select(['id', 'first_name', 'last_name', 'email']).execute();
      expect(contacts).toEqual([{ id: 'c1', first_name: odd(0), last_name: null, email: 'NULL' }]);
    });

    if (dialect.name === 'postgres') {
      it('a batch of references goes as one statement of arrays, through no staging table', async () => {
        const refs = Array.from({ length: 1500 }, (_, i) => ({ id: `u${i}`, name: `n${i}`, email: null }));
        await upsertUsers(databaseOf(store), refs);
        const stages = await sql<{ relname: string }>`select relname from pg_class where relname like 'wsmirror_stage_%'`.execute(
          databaseOf(store),
        );
        expect(stages.rows).toEqual([]);
        expect(await users()).toHaveLength(1500);
      });
    }
  });
}
