import Database from 'better-sqlite3';
import pg from 'pg';
import type { Dialect } from './dialects.js';

/**
 * A person's SQL client on the mirror, foreign keys off (the sqlite3 shell's default; PostgreSQL's
 * replica role): `$1`-style parameters on both. Returns the rows of a query, [] for a statement. It
 * waits for a running writer's transaction as a shell with a busy timeout would.
 */
export async function byHand(dialect: Dialect, database: string, statement: string, params: unknown[] = []): Promise<unknown[]> {
  if (dialect.name === 'sqlite') {
    const db = new Database(database);
    try {
      db.pragma('busy_timeout = 10000');
      db.pragma('foreign_keys = OFF');
      const st = db.prepare(statement.replace(/\$\d+/g, '?'));
      return st.reader ? st.all(...params) : (st.run(...params), []);
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: database });
  await client.connect();
  try {
    await client.query('SET session_replication_role = replica');
    return (await client.query(statement, params)).rows;
  } finally {
    await client.end();
  }
}
