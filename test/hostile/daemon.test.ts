/**
 * Issue 11 under `run` and at the edges of the command line: a looping or stalled upstream turns
 * /healthz unhealthy within a stated bound and healthy again when the upstream recovers; a wrong
 * baseUrl and a busy port are configuration problems (exit 2) that name the key to fix.
 */
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { cliConfig } from '../cli/env.js';
import { runCli, spawnCli, waitForOutput } from '../helpers/cli.js';
import { dialects } from '../helpers/dialects.js';
import { tempDir } from '../helpers/tmp.js';
import { startHostile, type Faults, type HostileUpstream } from './server.js';

const KEY = 'test-key';

async function freePort(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return { port: typeof address === 'object' && address ? address.port : 0, server };
}

/** Polls /healthz until its HTTP status is `want`; returns the body of that answer. */
async function healthBecomes(url: string, want: number, timeoutMs: number): Promise<{ reason?: string; lastError?: string | null }> {
  const started = performance.now();
  for (;;) {
    const answer = await fetch(url).then(
      async (r) => ({ status: r.status, body: (await r.json()) as { reason?: string } }),
      () => null,
    );
    if (answer?.status === want) return answer.body;
    if (performance.now() - started > timeoutMs)
      throw new Error(`${url} did not answer ${want} within ${timeoutMs} ms (last ${answer?.status ?? 'no answer'})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('hostile upstream under run, and configuration exits', () => {
  let sim: Simulator;
  let hostile: HostileUpstream;

  beforeAll(async () => {
    sim = await startSimulator({ seed: 12, tickets: 8, deals: 4, control: true, apiKeys: { [KEY]: '' } });
    hostile = await startHostile(sim.url);
  });
  afterAll(async () => {
    await hostile?.close();
    await sim?.close();
  });
  const reset = () => {
    for (const k of Object.keys(hostile.faults)) delete hostile.faults[k as keyof Faults];
  };

  for (const dialect of dialects) {
    it(`run (${dialect.name}): a repeating cursor, then a stalled cycle, turn /healthz red; it recovers with the upstream`, async () => {
      const { dir, cleanup } = tempDir();
      const target = await dialect.newDatabase();
      const { port, server } = await freePort();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      const env = cliConfig(dir, {
        url: hostile.url,
        database: target.database,
        // tickOverlapMinSeconds 5: every tick follows the cursor to the end, so each one meets the
        // repeated cursor, whether or not its first page already reached past a 1 s overlap.
        extra: { http: { port }, schedule: '* * * * * *', stallTimeoutMs: 1500, requestTimeoutMs: 60_000, tickOverlapMinSeconds: 5 },
      });
      const daemon = spawnCli(['run'], { ...env, WSMIRROR_LOG_LEVEL: 'info' });
      const healthz = `http://127.0.0.1:${port}/healthz`;
      try {
        await waitForOutput(daemon, /sync cycle/, 30_000);
        await healthBecomes(healthz, 200, 10_000);
        // A cycle fails at once on a repeated cursor; a tick per second, so red after ~3 s.
        hostile.faults.repeatCursor = true;
        const red1 = await healthBecomes(healthz, 503, 30_000);
        expect(red1.reason).toMatch(/last \d+ cycles made no progress.*already given in this listing/);
        reset();
        await healthBecomes(healthz, 200, 15_000);
        // Each stalled cycle ends after stallTimeoutMs (1.5 s). Liveness turns red while one runs
        // that long without progress, or after three of them in a row: the answer seen says which.
        hostile.faults.stallEvents = true;
        const red2 = await healthBecomes(healthz, 503, 30_000);
        expect(red2.reason).toMatch(/no progress/);
        if (/cycles made no progress/.test(red2.reason ?? '')) expect(red2.lastError).toMatch(/stallTimeoutMs/);
        reset();
        await healthBecomes(healthz, 200, 15_000);
      } finally {
        reset();
        daemon.kill('SIGTERM');
        const r = await daemon.result;
        expect(r.code).toBe(0);
        await target.drop();
        cleanup();
      }
    }, 120_000);
  }

  for (const dialect of dialects) {
    it(`run (${dialect.name}): a Date of 2100 shows in wsmirror_upstream_clock_skew_seconds, with one warning per cycle`, async () => {
      const { dir, cleanup } = tempDir();
      const target = await dialect.newDatabase();
      const { port, server } = await freePort();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      hostile.faults.date = 'Fri, 01 Jan 2100 00:00:00 GMT';
      const env = cliConfig(dir, { url: hostile.url, database: target.database, extra: { http: { port }, schedule: '* * * * * *' } });
      const daemon = spawnCli(['run'], { ...env, WSMIRROR_LOG_LEVEL: 'info' });
      try {
        await waitForOutput(daemon, /sync cycle[\s\S]*sync cycle[\s\S]*sync cycle/, 60_000);
        const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
        const skew = Number(/^wsmirror_upstream_clock_skew_seconds (\S+)$/m.exec(metrics)?.[1]);
        // 2100-01-01 minus now: over two billion seconds.
        expect(skew).toBeGreaterThan(2_000_000_000);
      } finally {
        reset();
        daemon.kill('SIGTERM');
      }
      const r = await daemon.result;
      expect(r.code).toBe(0);
      const lines = r.stderr.split('\n');
      const cycles = lines.filter((l) => /"msg":"sync cycle/.test(l)).length;
      const warnings = lines.filter((l) => /beyond the 300 s tolerance; the local clock bounds/.test(l)).length;
      // One per cycle, plus the backfill's own and a cycle the stop may have cut short.
      expect(cycles).toBeGreaterThanOrEqual(3);
      expect(warnings).toBeGreaterThanOrEqual(cycles);
      expect(warnings).toBeLessThanOrEqual(cycles + 2);
      await target.drop();
      cleanup();
    }, 120_000);
  }

  for (const dialect of dialects) {
    it(`backfill (${dialect.name}): a newest event in 9999 is no hand-over watermark nor history, and a 403 on one ticket quarantines only it`, async () => {
      const { dir, cleanup } = tempDir();
      const target = await dialect.newDatabase();
      const tickets = sim.control.truth().tickets as Array<{ id: string }>;
      const newest = Math.max(...(sim.control.truth().events as Array<{ occurredAt: string }>).map((e) => Date.parse(e.occurredAt)));
      hostile.faults.injectEvent = {
        id: 'ev_far',
        type: 'ticket.updated',
        entityType: 'ticket',
        entityId: tickets[0]!.id,
        payload: {},
        actor: null,
        occurredAt: '9999-12-31T23:59:59Z',
      };
      hostile.faults.recordStatus = { id: tickets[1]!.id, status: 403 };
      try {
        const env = cliConfig(dir, { url: hostile.url, database: target.database });
        const r = await runCli(['backfill', '--history'], env);
        expect(r.code, r.stderr).toBe(0);
        const status = JSON.parse((await runCli(['status', '--json'], env)).stdout) as {
          watermark: string;
          counts: Record<string, number>;
          quarantined: Array<{ entityType: string; entityId: string; reason: string }>;
        };
        expect(Date.parse(status.watermark)).toBeLessThanOrEqual(newest);
        expect(status.quarantined.find((q) => q.entityId === tickets[1]!.id)?.reason).toMatch(/403/);
        // The history copy keeps it out of the events table (and so out of ticket_history).
        expect(status.quarantined.find((q) => q.entityType === 'event')?.entityId).toBe('ev_far');
        expect(status.counts.events).toBe((sim.control.truth().events as unknown[]).length);
      } finally {
        reset();
        await target.drop();
        cleanup();
      }
    }, 60_000);
  }

  it.each([
    ['404', { status: 404 }, /answered 404/],
    ['a redirect', { status: 302, location: 'https://example.com/login' }, /answered 302/],
    ['an HTML page', { status: 200, html: true }, /HTML/],
  ] as const)(
    'a probe answering %s exits 2 naming baseUrl',
    async (_what, probe, pattern) => {
      const { dir, cleanup } = tempDir();
      hostile.faults.probeStatus = { ...probe };
      try {
        for (const command of ['sync', 'backfill']) {
          const r = await runCli([command], cliConfig(dir, { url: hostile.url }));
          expect(r.code).toBe(2);
          expect(r.stderr).toMatch(/baseUrl/);
          expect(r.stderr).toMatch(pattern);
        }
      } finally {
        reset();
        cleanup();
      }
    },
    30_000,
  );

  it('a health port already in use exits 2 naming http.port', async () => {
    const { dir, cleanup } = tempDir();
    const { port, server } = await freePort();
    try {
      const r = await runCli(['run'], cliConfig(dir, { url: hostile.url, extra: { http: { port } } }));
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(new RegExp(`http\\.port ${port}.*already in use`));
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      cleanup();
    }
  }, 30_000);
});
