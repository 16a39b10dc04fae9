import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FR_DELTA } from '../../src/report/aggregate-facts.js';
import { FIRST_REPLIES } from '../../src/report/aggregates-incremental.js';
import { SCOPED_DEALS } from '../../src/report/deals.js';
import { sqlDialect } from '../../src/report/dialect.js';
import { DEAL_SCOPE, freshTemp, runAll, TICKET_SCOPE, withNow } from '../../src/report/sql-util.js';
import { INSERT_INTERVALS, SCOPED_TICKETS } from '../../src/report/tickets.js';
import { openStore, type Store } from '../../src/store/index.js';
import { tempDir } from '../store/fixtures.js';
import { databaseOf } from '../../src/store/internal.js';

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
    const db = databaseOf(store).withTables<Record<string, never>>();
    const d = sqlDialect(db);
    await runAll(d, db as never, freshTemp(d, scope, 'id TEXT PRIMARY KEY'));
    const rows = await sql.raw<{ detail: string }>(`EXPLAIN QUERY PLAN SELECT * FROM ${from}`).execute(db);
    return rows.rows.map((r) => r.detail);
  };

  it('tickets', async () => {
    const d = sqlDialect(databaseOf(store));
    const steps = await plan(SCOPED_TICKETS(d), TICKET_SCOPE);
    expect(steps[0]).toMatch(/^SCAN sc\b/);
    expect(steps[1]).toMatch(/^SEARCH t USING INDEX sqlite_autoindex_tickets_1 \(id=\?\)/);
  });

  it('the status intervals of the scope read history and tickets by key, never in full', async () => {
    // Joined the other way round, SQLite walked all of ticket_history in (ticket_id, changed_at)
    // order to spare the window's sort, or scanned every ticket to probe the intervals: a cost
    // that grows with the mirror's history, not with the tickets a cycle changed.
    const db = databaseOf(store).withTables<Record<string, never>>();
    const d = sqlDialect(db);
    await runAll(d, db as never, freshTemp(d, TICKET_SCOPE, 'id TEXT PRIMARY KEY'));
    const insert = withNow(d, INSERT_INTERVALS(d), '2024-03-06T00:00:00.000Z').compile(db).sql;
    const steps = (await sql.raw<{ detail: string }>(`EXPLAIN QUERY PLAN ${insert}`).execute(db)).rows.map((r) => r.detail);
    const scans = steps.filter((s) => s.startsWith('SCAN '));
    // sc: the scope table; h, kept, iv: the statement's own CTEs; s: the scope CTE.
    for (const scan of scans) expect(scan).toMatch(/^SCAN (sc|h|kept|iv|s|\(subquery-\d+\))$/);
    expect(steps.filter((s) => /ticket_history|tickets_1/.test(s)).every((s) => s.startsWith('SEARCH '))).toBe(true);
  });

  it("a day's first-reply percentiles read that day's tickets through the first_agent_reply_at index", async () => {
    // Joined the other way round, SQLite scanned every rpt_tickets row to find the few days whose
    // first replies changed.
    const db = databaseOf(store).withTables<Record<string, never>>();
    const d = sqlDialect(db);
    await runAll(d, db as never, freshTemp(d, FR_DELTA, `day ${d.dayType}, v ${d.real}, sign INTEGER`));
    const update = withNow(d, FIRST_REPLIES(d), '2024-03-06T00:00:00.000Z').compile(db).sql;
    const steps = (await sql.raw<{ detail: string }>(`EXPLAIN QUERY PLAN ${update}`).execute(db)).rows.map((r) => r.detail);
    expect(steps.filter((s) => /^(SCAN|SEARCH) r\b/.test(s))).toEqual([
      expect.stringMatching(/^SEARCH r USING INDEX rpt_tickets_first_reply_idx \(first_agent_reply_at>\? AND first_agent_reply_at<\?\)/),
    ]);
  });

  it('deals', async () => {
    const d = sqlDialect(databaseOf(store));
    const steps = await plan(SCOPED_DEALS(d), DEAL_SCOPE);
    expect(steps[0]).toMatch(/^SCAN sc\b/);
    expect(steps[1]).toMatch(/^SEARCH d USING INDEX sqlite_autoindex_deals_1 \(id=\?\)/);
  });
});
