import type { OpenStoreOptions, SharedPostgres, Store } from './store.js';

const isPostgresUrl = (s: string) => /^postgres(ql)?:\/\//i.test(s);

/** Opens the mirror named by `database`: a `postgres://` URL, else a SQLite file path. */
export async function openStore(options: OpenStoreOptions): Promise<Store> {
  const readonly = options.readonly ?? false;
  // `pg` loads only when a PostgreSQL mirror is opened: loading it put 19 MB on the resident
  // memory of every SQLite process at start (81 against 62 MB with the store module loaded).
  if (isPostgresUrl(options.database)) {
    if (options.shared) {
      const { openOnShared } = await import('./postgres-shared.js');
      return openOnShared(options.shared, options.schema ?? 'public', readonly);
    }
    const { openPostgres } = await import('./postgres.js');
    return openPostgres(options.database, readonly, { ...(options.schema ? { schema: options.schema } : {}) });
  }
  const { openSqlite } = await import('./sqlite.js');
  return openSqlite(options.database, readonly, options.leaveOpenOnClose ?? false, {
    ...(options.fileMode !== undefined ? { fileMode: options.fileMode } : {}),
    ...(options.directoryMode !== undefined ? { directoryMode: options.directoryMode } : {}),
    ...(options.walCheckpointIntervalMs !== undefined ? { walCheckpointIntervalMs: options.walCheckpointIntervalMs } : {}),
  });
}

/**
 * One pool of connections for the stores of many schemas of the database at `url` (a fleet
 * worker's): pass it as `shared` to openStore. `max` bounds the connections; a writer's lock holds
 * one for as long as it is held, so allow two per store open at once.
 */
export async function openSharedPostgres(url: string, max: number): Promise<SharedPostgres> {
  const { openSharedPostgres: open } = await import('./postgres-shared.js');
  return open(url, max);
}
