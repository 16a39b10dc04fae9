import { openPostgres } from './postgres.js';
import { openSqlite } from './sqlite.js';
import type { OpenStoreOptions, Store } from './store.js';

const isPostgresUrl = (s: string) => /^postgres(ql)?:\/\//i.test(s);

/** Opens the mirror named by `database`: a `postgres://` URL, else a SQLite file path. */
export async function openStore(options: OpenStoreOptions): Promise<Store> {
  const readonly = options.readonly ?? false;
  return isPostgresUrl(options.database)
    ? openPostgres(options.database, readonly, { ...(options.schema ? { schema: options.schema } : {}) })
    : openSqlite(options.database, readonly, options.leaveOpenOnClose ?? false, {
        ...(options.fileMode !== undefined ? { fileMode: options.fileMode } : {}),
        ...(options.directoryMode !== undefined ? { directoryMode: options.directoryMode } : {}),
        ...(options.walCheckpointIntervalMs !== undefined ? { walCheckpointIntervalMs: options.walCheckpointIntervalMs } : {}),
      });
}
