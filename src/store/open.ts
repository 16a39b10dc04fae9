import type { OpenStoreOptions, Store } from './store.js';

const isPostgresUrl = (s: string) => /^postgres(ql)?:\/\//i.test(s);

/** Opens the mirror named by `database`: a `postgres://` URL, else a SQLite file path. */
export async function openStore(options: OpenStoreOptions): Promise<Store> {
  const readonly = options.readonly ?? false;
  // `pg` loads only when a PostgreSQL mirror is opened: loading it put 19 MB on the resident
  // memory of every SQLite process at start (81 against 62 MB with the store module loaded).
  if (isPostgresUrl(options.database)) {
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
