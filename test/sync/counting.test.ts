/**
 * Counters, metrics and `status` tell the same story as the upstream's request log and the
 * mirror's rows when records are quarantined during a backfill and a drain: one by the read (a
 * record that fails validation) and one by the store (an amount it cannot hold exactly, which
 * passes the API's validation). The metrics come from the daemon's own telemetry object, wired
 * to the client and the sync hooks exactly as `run` wires them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient } from '../../src/api/index.js';
import { DaemonTelemetry, maintainMirror } from '../../src/daemon/index.js';
import { silentLogger } from '../../src/log/index.js';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { openStore, type Store } from '../../src/store/index.js';
import { readWatermark, recordRun, runBackfill, runSyncCycle, type RunStats, type SyncContext } from '../../src/sync/index.js';
import { metricSeries, metricValue } from '../cli/ops-helpers.js';
import { runCli } from '../helpers/cli.js';
import { dialects } from '../helpers/dialects.js';
import { startHostile, type HostileUpstream } from '../hostile/server.js';
import { API_KEY, callApi, testDrainPlan } from './harness.js';
import { databaseOf } from '../../src/store/internal.js';

/** Passes the API's amount validation (finite), beyond what the mirror stores exactly in cents. */
const UNSTORABLE_AMOUNT = '99999999999999999999.00';

interface Row {
  id: string;
}

for (const dialect of dialects) {
  describe(`counting with quarantined records (${dialect.name})`, () => {
    let sim: Simulator;
    let hostile: HostileUpstream;
    let store: Store;
    let client: ApiClient;
    let telemetry: DaemonTelemetry;
    let ctx: SyncContext;
    let database: string;
    let drop: () => Promise<void>;
    let badDeal: string;
    let badTicket: string;

    beforeAll(async () => {
      sim = await startSimulator({ seed: 21, tickets: 12, deals: 6, control: true, apiKeys: { [API_KEY]: '' } });
      hostile = await startHostile(sim.url);
      const truth = sim.control.truth() as { tickets: Row[]; deals: Row[] };
      badDeal = truth.deals[0]!.id;
      badTicket = truth.tickets[0]!.id;
      hostile.faults.patchRecords = { [badDeal]: { amount: UNSTORABLE_AMOUNT }, [badTicket]: { updatedAt: 'not a time' } };
      ({ database, drop } = await dialect.newDatabase());
      store = await openStore({ database });
      await store.migrate();
      telemetry = new DaemonTelemetry('* * * * * *', 600_000);
      client = createApiClient({
        baseUrl: hostile.url,
        apiKey: API_KEY,
        maxRequestsPerSecond: 5000,
        retry: { maxAttempts: 3, minDelayMs: 1, maxDelayMs: 20 },
        onRequest: (e) => telemetry.request(e),
      });
      ctx = {
        store,
        client,
        logger: silentLogger(),
        config: { lookbackSeconds: 300, pageSize: 5, concurrency: 4, drainPlan: testDrainPlan() },
        stopSignal: new AbortController().signal,
        now: () => new Date().toISOString(),
        hooks: telemetry.hooks(),
      };
    }, 60_000);

    afterAll(async () => {
      await client?.close();
      await store?.close();
      await hostile?.close();
      await sim?.close();
      await drop?.();
    });

    const metrics = () => telemetry.metrics.registry.metrics();
    const sumOf = (text: string, name: string, labels: Record<string, string> = {}) =>
      metricSeries(text, name)
        .filter((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))
        .reduce((n, s) => n + s.value, 0);
    const quarantineRows = async () => databaseOf(store).selectFrom('quarantine').select(['entity_type', 'entity_id']).execute();
    const rows = async (table: 'tickets' | 'deals') => (await databaseOf(store).selectFrom(table).select('id').execute()).map((r) => r.id);

    it('a backfill counts what it stored and what it quarantined, as the mirror holds them', async () => {
      const { stats } = await recordRun(ctx, 'backfill', (s) => runBackfill(ctx, s));
      const backfill = await databaseOf(store).selectFrom('sync_runs').selectAll().where('kind', '=', 'backfill').executeTakeFirstOrThrow();

      const truth = sim.control.truth() as { tickets: Row[]; deals: Row[] };
      expect((await rows('deals')).sort()).toEqual(
        truth.deals
          .map((d) => d.id)
          .filter((id) => id !== badDeal)
          .sort(),
      );
      expect((await rows('tickets')).sort()).toEqual(
        truth.tickets
          .map((t) => t.id)
          .filter((id) => id !== badTicket)
          .sort(),
      );
      expect((await quarantineRows()).map((q) => `${q.entity_type}:${q.entity_id}`).sort()).toEqual(
        [`deal:${badDeal}`, `ticket:${badTicket}`].sort(),
      );

      // The backfill's own figures: copied excludes both, quarantined counts both.
      const status = await statusJson();
      expect(status.backfill?.copied).toMatchObject({ deals: truth.deals.length - 1, tickets: truth.tickets.length - 1 });
      expect(stats.quarantined).toBe(2);
      // Every request the upstream saw is in the run's count and in the metrics.
      expect(Number(backfill.requests)).toBe(hostile.log.length);
      expect(sumOf(await metrics(), 'wsmirror_requests_total')).toBe(hostile.log.length);
    });

    it('a drain counts a record the store quarantines as quarantined, not fresh, everywhere', async () => {
      const before = hostile.log.length;
      const requestsBefore = sumOf(await metrics(), 'wsmirror_requests_total');
      const goodDeal = (sim.control.truth() as { deals: Row[] }).deals[1]!.id;
      await callApi(sim, 'PATCH', `/deals/${badDeal}`, { name: 'renamed, still unstorable' });
      await callApi(sim, 'PATCH', `/deals/${goodDeal}`, { name: 'renamed' });

      const { stats } = await recordRun(ctx, 'sync', (s: RunStats) => runSyncCycle(ctx, s));
      await maintainMirror({
        store,
        watermark: await readWatermark(store),
        retentionDays: 90,
        metrics: telemetry.metrics,
        logger: silentLogger(),
      });
      const run = await databaseOf(store).selectFrom('sync_runs').selectAll().where('kind', '=', 'sync').executeTakeFirstOrThrow();
      const text = await metrics();

      // The mirror: the good deal renamed, the unstorable one still out and in quarantine.
      const named = await databaseOf(store).selectFrom('deals').select(['id', 'name']).where('id', 'in', [goodDeal, badDeal]).execute();
      expect(named).toEqual([{ id: goodDeal, name: 'renamed' }]);
      expect(await store.dirtyCount()).toBe(0);

      // Counters: the unstorable deal counted quarantined (the first cycle's full window may also
      // re-read the invalid ticket: that counts too), the renamed one fresh; the run's own count,
      // the metrics and the quarantine rows seen during the run agree.
      const seenInRun = await databaseOf(store)
        .selectFrom('quarantine')
        .select('entity_id')
        .where('last_seen_at', '>=', run.started_at)
        .execute();
      expect(seenInRun.map((q) => q.entity_id)).toContain(badDeal);
      expect(stats.quarantined).toBe(seenInRun.length);
      expect(sumOf(text, 'wsmirror_records_total', { outcome: 'quarantined' })).toBe(seenInRun.length);
      expect(metricValue(text, 'wsmirror_records_total', { entity_type: 'deal', outcome: 'quarantined' })).toBe(1);
      expect(metricValue(text, 'wsmirror_records_total', { entity_type: 'deal', outcome: 'fresh' })).toBe(1);
      expect(sumOf(text, 'wsmirror_records_total')).toBe(stats.recordsFetched);
      expect(Number(run.records_fetched)).toBe(stats.recordsFetched);
      // Requests: the run's count, the metrics' and the upstream's log agree.
      expect(Number(run.requests)).toBe(hostile.log.length - before);
      expect(sumOf(text, 'wsmirror_requests_total') - requestsBefore).toBe(hostile.log.length - before);
      // Quarantine: the gauge, status and the table agree.
      const status = await statusJson();
      const table = await quarantineRows();
      expect(metricValue(text, 'wsmirror_quarantined_records')).toBe(table.length);
      expect(Object.values(status.quarantinedByType).reduce((a, b) => a + b, 0)).toBe(table.length);
      expect(status.counts.deals).toBe((await rows('deals')).length);
    });

    async function statusJson(): Promise<{
      backfill: { copied: Record<string, number> } | null;
      quarantinedByType: Record<string, number>;
      counts: Record<string, number>;
    }> {
      const r = await runCli(['status', '--json'], {
        WSMIRROR_DATABASE: database,
        WSMIRROR_BASE_URL: undefined,
        WSMIRROR_API_KEY: undefined,
      });
      expect(r.code, r.stderr).toBe(0);
      return JSON.parse(r.stdout) as never;
    }
  });
}
