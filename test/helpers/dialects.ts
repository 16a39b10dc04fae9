import { join } from 'node:path';
import pg from 'pg';
import { tempDir } from './tmp.js';

/** One database target of the integration suites. */
export interface Dialect {
  name: 'sqlite' | 'postgres';
  /** A fresh, empty database: a SQLite file path or a postgres:// URL. */
  newDatabase(): Promise<{ database: string; drop: () => Promise<void> }>;
}

const PG_URL = process.env.WSMIRROR_TEST_POSTGRES_URL;

const sqlite: Dialect = {
  name: 'sqlite',
  newDatabase() {
    const { dir, cleanup } = tempDir();
    const drop = () => {
      cleanup();
      return Promise.resolve();
    };
    return Promise.resolve({ database: join(dir, 'mirror.sqlite'), drop });
  },
};

let counter = 0;

const postgres: Dialect = {
  name: 'postgres',
  async newDatabase() {
    const name = `wsmirror_t_${process.pid}_${Date.now()}_${counter++}`;
    await admin(`create database ${name}`);
    const url = new URL(PG_URL!);
    url.pathname = `/${name}`;
    return {
      database: url.toString(),
      drop: () => admin(`drop database if exists ${name} with (force)`),
    };
  },
};

/**
 * Runs `fn` while a transaction that holds a transaction id stays open in the server's own
 * database (WSMIRROR_TEST_POSTGRES_URL, never a mirror's): every snapshot taken meanwhile anywhere
 * on the server carries it as its xmin, as a long transaction of another application would.
 */
export async function withTransactionElsewhere<T>(fn: () => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await client.query('begin');
    await client.query('select pg_current_xact_id()');
    return await fn();
  } finally {
    await client.query('rollback');
    await client.end();
  }
}

async function admin(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/**
 * SQLite always; PostgreSQL when WSMIRROR_TEST_POSTGRES_URL names a server where databases may be
 * created (CI sets it). Each suite loops `for (const dialect of dialects)`.
 */
export const dialects: Dialect[] = PG_URL ? [sqlite, postgres] : [sqlite];

if (!PG_URL) {
  console.warn(
    'PostgreSQL cases skipped: WSMIRROR_TEST_POSTGRES_URL is not set (CI sets it; locally e.g. WSMIRROR_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test npm test).',
  );
}

export const postgresDialect: Dialect | null = PG_URL ? postgres : null;
