import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { endpointOf, type BackfillProgress, type HealthSnapshot } from '../../src/daemon/index.js';
import { startSimulator } from '../../src/simulator/index.js';
import { runCli, spawnCli, waitForOutput } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { cliConfig, useSimulator } from './env.js';
import { freePort, metricValue, metricSeries, poll } from './ops-helpers.js';

const DOCS = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');
/** Metric names in the docs' metric table: each row starts with the name in backticks. */
const DOCUMENTED = [...DOCS.matchAll(/^\| `(wsmirror_[a-z_]+)`/gm)].map((m) => m[1]!);
/** Only once a matching event happened, or only for one dialect (docs/operations.md says which). */
const CONDITIONAL = new Set(['wsmirror_backfill_total_estimate']);

/** What /healthz and /readyz answer (src/daemon/health.ts); a key they leave out fails the expectation that reads it. */
type HealthBody = Partial<HealthSnapshot> & { status?: string; reason?: string; progress?: BackfillProgress };

async function get(url: string): Promise<{ status: number; body: HealthBody }> {
  const r = await fetch(url);
  return { status: r.status, body: (await r.json()) as HealthBody };
}

/**
 * /metrics once the first cycle's maintenance (checkpoint, gauges) has run: it ends the cycle's
 * exclusive section, so every figure of that cycle is in place.
 */
async function metricsAfterMaintenance(base: string): Promise<string> {
  await poll(
    async () => metricValue(await (await fetch(`${base}/metrics`)).text(), 'wsmirror_wal_checkpoints_total', { result: 'complete' }) >= 1,
  );
  return (await fetch(`${base}/metrics`)).text();
}

describe('run: health, readiness and metrics', () => {
  const sim = useSimulator({ seed: 21, tickets: 60, deals: 15 });

  it('right after one backfill and one sync: every documented metric, request counts equal the simulator request log', async () => {
    const { dir, cleanup } = tempDir();
    const port = await freePort();
    // A schedule that never fires during the test: exactly the first cycle runs.
    const env = { ...cliConfig(dir, { url: sim.url, extra: { schedule: '0 0 0 1 1 *', http: { port } } }), WSMIRROR_LOG_LEVEL: 'info' };
    sim.control.clearRequests();
    const daemon = spawnCli(['run'], env);
    await waitForOutput(daemon, /"msg":"sync cycle"/);
    const base = `http://127.0.0.1:${port}`;
    const text = await metricsAfterMaintenance(base);

    expect(DOCUMENTED.length).toBeGreaterThan(15);
    for (const name of DOCUMENTED)
      if (!CONDITIONAL.has(name)) expect(text, name).toMatch(new RegExp(`^${name}(\\{|_bucket|_count| )`, 'm'));

    const log = sim.control.requests();
    const byEndpoint = new Map<string, number>();
    for (const r of log) byEndpoint.set(endpointOf(r.path), (byEndpoint.get(endpointOf(r.path)) ?? 0) + 1);
    const series = metricSeries(text, 'wsmirror_requests_total');
    expect(series.reduce((n, s) => n + s.value, 0)).toBe(log.length);
    for (const [endpoint, n] of byEndpoint)
      expect(metricValue(text, 'wsmirror_requests_total', { endpoint, status_class: '2xx' }), endpoint).toBe(n);
    expect(metricValue(text, 'wsmirror_retries_total')).toBe(0);

    const db = new Database(join(dir, 'mirror.sqlite'), { readonly: true });
    const runs = db.prepare('select kind, outcome, events_read, events_new from sync_runs').all() as {
      kind: string;
      outcome: string;
      events_read: number;
      events_new: number;
    }[];
    const tickets = (db.prepare('select count(*) n from tickets').get() as { n: number }).n;
    const deals = (db.prepare('select count(*) n from deals').get() as { n: number }).n;
    db.close();
    expect(runs.map((r) => `${r.kind}:${r.outcome}`)).toEqual(['backfill:success', 'sync:success']);
    expect(metricValue(text, 'wsmirror_sync_cycles_total', { outcome: 'success' })).toBe(2);
    expect(metricValue(text, 'wsmirror_events_total', { kind: 'read' })).toBe(runs.reduce((n, r) => n + r.events_read, 0));
    expect(metricValue(text, 'wsmirror_events_total', { kind: 'new' })).toBe(runs.reduce((n, r) => n + r.events_new, 0));
    expect(metricValue(text, 'wsmirror_events_total', { kind: 'late' })).toBe(0);
    expect(metricValue(text, 'wsmirror_backfill_records', { list: 'tickets' })).toBe(tickets);
    expect(metricValue(text, 'wsmirror_backfill_records', { list: 'deals' })).toBe(deals);
    expect(metricValue(text, 'wsmirror_backfill_total_estimate', { list: 'deals' })).toBe(15);
    expect(metricValue(text, 'wsmirror_backfill_in_progress')).toBe(0);
    expect(metricValue(text, 'wsmirror_cycle_duration_seconds_count', { kind: 'backfill' })).toBe(1);
    expect(metricValue(text, 'wsmirror_cycle_duration_seconds_count', { kind: 'sync' })).toBe(1);
    expect(metricValue(text, 'wsmirror_is_writer')).toBe(1);
    expect(metricValue(text, 'wsmirror_lag_seconds')).toBe(0);
    expect(metricValue(text, 'wsmirror_dirty_records')).toBe(0);
    expect(metricValue(text, 'wsmirror_quarantined_records')).toBe(0);
    expect(metricValue(text, 'wsmirror_last_success_timestamp_seconds')).toBeGreaterThan(Date.now() / 1000 - 60);
    expect(metricValue(text, 'wsmirror_last_progress_timestamp_seconds')).toBeGreaterThan(Date.now() / 1000 - 60);
    expect(metricValue(text, 'wsmirror_events_pruned_total')).toBe(0);
    expect(metricValue(text, 'wsmirror_sync_cycles_total', { outcome: 'failed' })).toBe(0);
    expect(metricValue(text, 'wsmirror_sqlite_bytes', { file: 'database' })).toBe(statSync(join(dir, 'mirror.sqlite')).size);
    expect(metricValue(text, 'wsmirror_sqlite_bytes', { file: 'wal' })).toBe(0);

    expect(await get(`${base}/healthz`)).toMatchObject({ status: 200, body: { status: 'ok', role: 'writer' } });
    expect(await get(`${base}/readyz`)).toMatchObject({ status: 200, body: { status: 'ready', role: 'writer', backfill: null } });
    daemon.kill('SIGTERM');
    expect((await daemon.result).code).toBe(0);
    cleanup();
  });

  it('records and events by outcome right after a sync equal what the run recorded', async () => {
    const { dir, cleanup } = tempDir();
    const port = await freePort();
    const env = { ...cliConfig(dir, { url: sim.url, extra: { schedule: '0 0 0 1 1 *', http: { port } } }), WSMIRROR_LOG_LEVEL: 'info' };
    expect((await runCli(['backfill'], env)).code).toBe(0);
    sim.control.act(12);
    sim.control.clearRequests();
    const daemon = spawnCli(['run'], env);
    await waitForOutput(daemon, /"msg":"sync cycle"/);
    const base = `http://127.0.0.1:${port}`;
    const text = await metricsAfterMaintenance(base);
    const db = new Database(join(dir, 'mirror.sqlite'), { readonly: true });
    const run = db.prepare("select * from sync_runs where kind = 'sync'").get() as Record<string, number>;
    db.close();
    const records = metricSeries(text, 'wsmirror_records_total');
    expect(run.records_fetched).toBeGreaterThan(0);
    expect(records.reduce((n, s) => n + s.value, 0)).toBe(run.records_fetched);
    expect(metricValue(text, 'wsmirror_events_total', { kind: 'read' })).toBe(run.events_read);
    expect(metricValue(text, 'wsmirror_events_total', { kind: 'new' })).toBe(run.events_new);
    expect(metricSeries(text, 'wsmirror_requests_total').reduce((n, s) => n + s.value, 0)).toBe(sim.control.requests().length);
    expect(metricValue(text, 'wsmirror_cycle_duration_seconds_count', { kind: 'backfill' })).toBe(0);
    expect(metricValue(text, 'wsmirror_cycle_duration_seconds_count', { kind: 'sync' })).toBe(1);
    daemon.kill('SIGTERM');
    expect((await daemon.result).code).toBe(0);
    cleanup();
  });

  it('request counters and backfill progress rise during the backfill, while /readyz says backfilling', async () => {
    const { dir, cleanup } = tempDir();
    const slow = await startSimulator({
      seed: 4,
      tickets: 150,
      deals: 10,
      control: true,
      apiKeys: { 'test-key': '' },
      faults: { latencyMs: 30 },
    });
    const port = await freePort();
    const env = {
      ...cliConfig(dir, { url: slow.url, extra: { pageSize: 5, concurrency: 2, http: { port } } }),
      WSMIRROR_LOG_LEVEL: 'info',
    };
    const daemon = spawnCli(['run'], env);
    await waitForOutput(daemon, /backfilling first/);
    const base = `http://127.0.0.1:${port}`;
    const seen: { requests: number; tickets: number }[] = [];
    await poll(async () => {
      const ready = await get(`${base}/readyz`);
      if (ready.status !== 503 || ready.body.reason !== 'backfilling') return false;
      expect(ready.body.progress?.phase).toMatch(/deals|tickets|history/);
      const text = await (await fetch(`${base}/metrics`)).text();
      const requests = metricSeries(text, 'wsmirror_requests_total').reduce((n, s) => n + s.value, 0);
      seen.push({ requests, tickets: metricValue(text, 'wsmirror_backfill_records', { list: 'tickets' }) });
      expect(metricValue(text, 'wsmirror_backfill_in_progress')).toBe(1);
      const distinct = new Set(seen.map((s) => s.requests));
      return distinct.size >= 3 && seen.at(-1)!.tickets > 0;
    }, 60_000);
    for (let i = 1; i < seen.length; i++) expect(seen[i]!.requests).toBeGreaterThanOrEqual(seen[i - 1]!.requests);
    expect(seen.at(-1)!.tickets).toBeLessThan(150);
    expect((await get(`${base}/healthz`)).status).toBe(200);
    daemon.kill('SIGTERM');
    expect((await daemon.result).code).toBe(0);
    await slow.close();
    cleanup();
  });

  it('standby is ready; failing cycles make the writer not ready; a stalled cycle fails liveness', async () => {
    const { dir, cleanup } = tempDir();
    const own = await startSimulator({ seed: 8, tickets: 20, deals: 5, control: true, apiKeys: { 'test-key': '' } });
    const [p1, p2] = [await freePort(), await freePort()];
    const extra = { requestTimeoutMs: 20_000, retry: { maxAttempts: 1, maxDelayMs: 10 } };
    const writer = spawnCli(['run'], {
      ...cliConfig(dir, { url: own.url, extra: { ...extra, stallTimeoutMs: 1000, http: { port: p1 } } }),
      WSMIRROR_LOG_LEVEL: 'info',
    });
    await waitForOutput(writer, /"msg":"sync cycle"/);
    const { dir: dir2, cleanup: cleanup2 } = tempDir();
    const standbyEnv = {
      ...cliConfig(dir2, { url: own.url, database: join(dir, 'mirror.sqlite'), extra: { http: { port: p2 } } }),
      WSMIRROR_LOG_LEVEL: 'info',
    };
    const standby = spawnCli(['run'], standbyEnv);
    await waitForOutput(standby, /hot standby/);
    const w = `http://127.0.0.1:${p1}`;
    const s = `http://127.0.0.1:${p2}`;
    expect(await get(`${s}/healthz`)).toMatchObject({ status: 200, body: { role: 'standby' } });
    expect(await get(`${s}/readyz`)).toMatchObject({ status: 200, body: { status: 'standby' } });
    expect(metricValue(await (await fetch(`${s}/metrics`)).text(), 'wsmirror_is_writer')).toBe(0);
    await poll(async () => (await get(`${w}/readyz`)).status === 200);

    // Every request fails: cycles fail, the writer turns not ready within three 1-second ticks, stays live.
    own.control.setFaults({ errorRate: 1 });
    await poll(async () => (await get(`${w}/readyz`)).status === 503, 30_000);
    const notReady = await get(`${w}/readyz`);
    expect(notReady.body.reason).toMatch(/the cycles fail/);
    expect(notReady.body.consecutiveFailures).toBeGreaterThan(0);
    expect((await get(`${w}/healthz`)).status).toBe(200);

    // A cycle whose request hangs past the 1 s stall bound: liveness fails, then recovers.
    own.control.setFaults({ errorRate: 0, latencyMs: 4000 });
    await poll(async () => (await get(`${w}/healthz`)).status === 503, 30_000);
    const stalled = await get(`${w}/healthz`);
    expect(stalled.body).toMatchObject({ status: 'unhealthy', role: 'writer' });
    expect(stalled.body.reason).toMatch(/no progress/);
    own.control.setFaults({ latencyMs: 0 });
    await poll(async () => (await get(`${w}/readyz`)).status === 200, 30_000);
    expect((await get(`${w}/healthz`)).status).toBe(200);

    standby.kill('SIGTERM');
    expect((await standby.result).code).toBe(0);
    writer.kill('SIGTERM');
    expect((await writer.result).code).toBe(0);
    await own.close();
    cleanup2();
    cleanup();
  });
});
