import type { MirrorDatabase, Store } from '../../src/store/index.js';
import { databaseOf } from '../../src/store/internal.js';

/**
 * Every row of `tables`, each as sorted JSON text, for comparing two mirrors written different
 * ways. Left out: history rows' surrogate ids, every raw copy (the quarantine's as null, others
 * kept as `raw`) and the `ignore` columns (wall-clock times).
 */
export async function tableSnapshot(
  store: Store,
  tables: readonly (keyof MirrorDatabase)[],
  ignore: readonly string[] = [],
): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const table of tables) {
    const rows = (await databaseOf(store).selectFrom(table).selectAll().execute()) as Record<string, unknown>[];
    out[table] = rows
      .map((row) => {
        const { id, raw_json, ...rest } = row;
        for (const column of ignore) delete rest[column];
        return JSON.stringify(table.endsWith('_history') ? rest : { id, ...rest, raw: table === 'quarantine' ? null : raw_json });
      })
      .sort();
  }
  return out;
}
