import { createServer } from 'node:net';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { startSimulator } from '../../src/simulator/index.js';
import { spawnCli, waitForOutput } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { cliConfig, useSimulator } from './env.js';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      srv.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

describe('wsmirror run (the daemon)', () => {
  const sim = useSimulator({ seed: 5, tickets: 30, deals: 10 });

  it('backfills an empty mirror, syncs on each tick, serves health and metrics, and stops on SIGTERM with exit 0', async () => {
    const { dir, cleanup } = tempDir();
    const port = await freePort();
    const env = { ...cliConfig(dir, { url: sim.url }), WSMIRROR_LOG_LEVEL: 'info', WSMIRROR_HTTP_PORT: String(port) };
    const daemon = spawnCli(['run'], env);
    let log = '';
    daemon.stderr.on('data', (d: Buffer) => (log += d.toString()));
    await waitForOutput(daemon, /"msg":"sync cycle"/);
    sim.control.act(5);
    // Two more cycles after the writes: the second of them surely started after act() returned.
    await waitForOutput(daemon, /"msg":"sync cycle"[\s\S]*"msg":"sync cycle"/, 60_000);
    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'ok', role: 'writer', consecutiveFailures: 0 });
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(metrics).toMatch(/^wsmirror_sync_cycles_total\{outcome="success"\} [1-9]/m);
    expect(metrics).toMatch(/^wsmirror_is_writer 1$/m);
    expect(metrics).toMatch(/^wsmirror_lag_seconds 0$/m);
    expect(metrics).toMatch(/^wsmirror_requests_total\{endpoint="events",status_class="2xx"\} [1-9]/m);
    daemon.kill('SIGTERM');
    const r = await daemon.result;
    // Exit 0 is itself the bound: past its 10 s grace the daemon aborts and exits 1.
    expect(r.code).toBe(0);
    expect(log).not.toContain('test-key');
    cleanup();
  });

  it('a second run waits as a hot standby and takes over within a tick after the first is killed', async () => {
    const { dir, cleanup } = tempDir();
    const env = { ...cliConfig(dir, { url: sim.url }), WSMIRROR_LOG_LEVEL: 'info' };
    const first = spawnCli(['run'], env);
    await waitForOutput(first, /"msg":"sync cycle"/);
    const second = spawnCli(['run'], env);
    await waitForOutput(second, /hot standby/);
    first.kill('SIGKILL');
    await first.result;
    // How fast the standby notices (a poll a second) is a figure for the benchmark, not a test.
    await waitForOutput(second, /writer lock held/, 60_000);
    sim.control.act(3);
    await waitForOutput(second, /"msg":"sync cycle"/, 60_000);
    second.kill('SIGTERM');
    expect((await second.result).code).toBe(0);
    const db = new Database(join(dir, 'mirror.sqlite'), { readonly: true });
    const runs = db.prepare("select count(*) as n from sync_runs where kind = 'backfill'").get() as { n: number };
    db.close();
    expect(runs.n).toBe(1);
    cleanup();
  });

  it('a second signal stops at once and loses nothing committed', async () => {
    const { dir, cleanup } = tempDir();
    const slow = await startSimulator({ seed: 9, tickets: 200, deals: 20, control: true, apiKeys: { 'test-key': '' } });
    const env = { ...cliConfig(dir, { url: slow.url, extra: { pageSize: 10 } }), WSMIRROR_LOG_LEVEL: 'info' };
    const daemon = spawnCli(['run'], env);
    // At the 30th request of the backfill, hold the answers (longer than the test needs, shorter
    // than the 10 s grace) and send the first signal: a page is then in flight by construction, and
    // stays in flight until the second signal, however slow the machine.
    let seen = 0;
    const unsubscribe = slow.control.onRequest(() => {
      if (++seen !== 30) return;
      slow.control.setFaults({ latencyMs: 8_000 });
      daemon.kill('SIGTERM');
    });
    // Standard signals are not queued: a second one sent before the first is handled merges into it.
    await waitForOutput(daemon, /stopping/);
    daemon.kill('SIGTERM');
    const r = await daemon.result;
    unsubscribe();
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/stopped at once/);
    // A restart resumes and completes.
    slow.control.setFaults({ latencyMs: 0 });
    const again = spawnCli(['run'], env);
    await waitForOutput(again, /"msg":"sync cycle"/, 30_000);
    again.kill('SIGTERM');
    expect((await again.result).code).toBe(0);
    const db = new Database(join(dir, 'mirror.sqlite'), { readonly: true });
    const n = db.prepare('select count(*) as n from tickets').get() as { n: number };
    db.close();
    expect(n.n).toBe(200);
    await slow.close();
    cleanup();
  });
});
