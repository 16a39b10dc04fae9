import { postgresDialect } from '../helpers/dialects.js';

/** The PostgreSQL server of the store's dialect tests: the one WSMIRROR_TEST_POSTGRES_URL names. */
export interface PgServer {
  /** A fresh, empty database on the server. */
  createDatabase(): Promise<string>;
  stop(): Promise<void>;
}

const dropped: Array<() => Promise<void>> = [];

export function startPg(): Promise<PgServer | null> {
  const pg = postgresDialect;
  if (!pg) return Promise.resolve(null);
  return Promise.resolve({
    async createDatabase() {
      const { database, drop } = await pg.newDatabase();
      dropped.push(drop);
      return database;
    },
    async stop() {
      for (const drop of dropped.splice(0)) await drop().catch(() => undefined);
    },
  });
}
