import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SCOPED_DEALS } from '../../src/report/deals.js';
import { sqlDialect } from '../../src/report/dialect.js';
import { DEAL_SCOPE, freshTemp, TICKET_SCOPE } from '../../src/report/sql-util.js';
import { SCOPED_TICKETS } from '../../src/report/tickets.js';
import { openStore, type Store } from '../../src/store/index.js';
import { tempDir } from '../store/fixtures.js';

/**
 * SQLite without statistics walked every live record through the (deleted_at, …) indexes to find
 * the few in a refresh's scope (600 ms for 1,300 of 50,000 tickets). The scope must drive the
 * join: a scan of the scope table and one primary-key probe per id, whatever indexes exist.
 */
describe('the refresh scope is driven by its id table (SQLite plan)', () => {
  let tmp: ReturnType<typeof tempDir>;
  let store: Store;
  beforeEach(async () => {
    tmp = tempDir();
    store = await openStore({ database: `${tmp.dir}/mirror.sqlite` });
    await store.migrate();
  });
  afterEach(async () => {
    await store.close();
    tmp.cleanup();
  });

  const plan = async (from: string, scope: string) => {
    const db = store.db.withTables<Record<string, never>>();
    const d = sqlDialect(db);
    await freshTemp(d, db as never, scope, 'id TEXT PRIMARY KEY');
    const rows = await sql.raw<{ detail: string }>(`EXPLAIN QUERY PLAN SELECT * FROM ${from}`).execute(db);
    return rows.rows.map((r) => r.detail);
  };

  it('tickets', async () => {
    const d = sqlDialect(store.db);
    const steps = await plan(SCOPED_TICKETS(d), TICKET_SCOPE);
    expect(steps[0]).toMatch(/^SCAN sc\b/);
    expect(steps[1]).toMatch(/^SEARCH t USING INDEX sqlite_autoindex_tickets_1 \(id=\?\)/);
  });

  it('deals', async () => {
    const d = sqlDialect(store.db);
    const steps = await plan(SCOPED_DEALS(d), DEAL_SCOPE);
    expect(steps[0]).toMatch(/^SCAN sc\b/);
    expect(steps[1]).toMatch(/^SEARCH d USING INDEX sqlite_autoindex_deals_1 \(id=\?\)/);
  });
});
