import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { cachingDatabase, STATEMENT_CACHE_SIZE, STATEMENT_CACHE_TEXT_BYTES } from './sqlite.js';

describe('the SQLite statement cache', () => {
  const sqlite = new Database(':memory:');
  sqlite.exec('create table t (id text primary key)');

  it('reuses a statement by its text', () => {
    const db = cachingDatabase(sqlite, true);
    const a = db.prepare('select id from t where id = ?');
    expect(db.prepare('select id from t where id = ?')).toBe(a);
    expect(db.cached().statements).toBe(1);
  });

  it('stays within its text budget when IN lists of every length pass through it', () => {
    const db = cachingDatabase(sqlite, true);
    for (let n = 1; n <= 500; n++) db.prepare(`select id from t where id in (${Array(n).fill('?').join(', ')})`);
    const { statements, textBytes } = db.cached();
    expect(textBytes).toBeLessThanOrEqual(STATEMENT_CACHE_TEXT_BYTES);
    expect(statements).toBeLessThan(500);
    // The newest (and so the hottest, by LRU) are the ones kept.
    const newest = `select id from t where id in (${Array(500).fill('?').join(', ')})`;
    expect(db.prepare(newest)).toBe(db.prepare(newest));
  });

  it('keeps at most STATEMENT_CACHE_SIZE short statements', () => {
    const db = cachingDatabase(sqlite, true);
    for (let n = 0; n < STATEMENT_CACHE_SIZE + 50; n++) db.prepare(`select ${n} from t`);
    expect(db.cached().statements).toBeLessThanOrEqual(STATEMENT_CACHE_SIZE);
  });
});
