import { afterEach, describe, expect, it, vi } from 'vitest';
import { refreshRptTables } from '../../src/report/index.js';
import { StagingClient } from '../../src/store/postgres-copy.js';
import { postgresDialect } from '../helpers/dialects.js';
import { dump, fullRebuildDump, useScenarioStore } from './stores.js';
import { tempDir } from '../store/fixtures.js';
import { NOW } from './scenario.js';

/**
 * On PostgreSQL a refresh's statements that return nothing go in one call per step (runAll in
 * src/report/sql-util.ts): a refresh of one changed ticket ran ~75 statements, one round trip
 * each, and at 1,000 fleet workspaces each round trip's wake-ups of the worker and its backend
 * are part of what a write costs (docs/fleet.md, "Sizing"). The calls are counted on the real
 * connection, which still runs every statement.
 */
describe.skipIf(postgresDialect === null)('a refresh on PostgreSQL makes few round trips', () => {
  const store = useScenarioStore(postgresDialect!);
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('one changed ticket and one changed deal: at most 30 calls for its ~95 statements, with the full rebuild figures', async () => {
    const tmp = tempDir();
    try {
      const calls = vi.spyOn(StagingClient.prototype, 'query');
      const later = new Date(NOW.getTime() + 3_600_000);
      await refreshRptTables(store, { tickets: new Set(['T1']), deals: new Set(['DL1']) }, { now: later });
      const texts = calls.mock.calls.map(([text]) => (typeof text === 'string' ? text : ''));
      calls.mockRestore();
      const statements = texts.reduce((n, text) => n + text.split(';\n').length, 0);
      // 95 statements in 30 calls when this was written, against one call each before.
      expect(statements).toBeGreaterThan(80);
      expect(texts.length).toBeLessThanOrEqual(30);
      expect(await dump(store)).toEqual(await fullRebuildDump(store, later, tmp.dir));
    } finally {
      tmp.cleanup();
    }
  });
});
