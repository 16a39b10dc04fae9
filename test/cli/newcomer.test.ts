import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { byHand } from '../helpers/by-hand.js';
import { runCli, spawnCli, waitForOutput } from '../helpers/cli.js';
import { dialects } from '../helpers/dialects.js';
import { tempDir } from '../helpers/tmp.js';
import { cliConfig, useSimulator } from './env.js';
import { freePort, poll } from './ops-helpers.js';

interface LiveCycles {
  live: { cycles: Array<{ kind: string; copied: number }> };
}

/**
 * Issue 46, point 6: the rough edges a newcomer met following the README and docs/operations.md,
 * each through the real CLI against the simulator, on both dialects where the database matters.
 */
for (const dialect of dialects) {
  describe(`a newcomer's daemon (${dialect.name})`, () => {
    const sim = useSimulator({ seed: 61, tickets: 12, deals: 8 });
    let env: Record<string, string>;
    let port: number;
    let database: string;
    let stderr = '';
    let done: () => Promise<void>;

    beforeAll(async () => {
      // A won deal without an amount, in a currency no other deal has: its sales row is its own.
      const auth = { authorization: 'Bearer test-key', 'content-type': 'application/json' };
      const { pipelines } = (await (await fetch(`${sim.url}/api/v1/pipelines`, { headers: auth })).json()) as {
        pipelines: Array<{ id: string; stages: Array<{ id: string; isWon: boolean }> }>;
      };
      const won = pipelines[0]!.stages.find((s) => s.isWon)!;
      const body = { name: 'No amount', pipelineId: pipelines[0]!.id, stage: won.id, amount: null, currency: 'XTS', ownerId: null };
      const created = await fetch(`${sim.url}/api/v1/deals`, { method: 'POST', headers: auth, body: JSON.stringify(body) });
      expect(created.status).toBe(201);

      const { dir, cleanup } = tempDir();
      const target = await dialect.newDatabase();
      database = target.database;
      port = await freePort();
      env = { ...cliConfig(dir, { url: sim.url, database, extra: { http: { port } } }), WSMIRROR_LOG_LEVEL: 'info' };
      const daemon = spawnCli(['run'], env);
      daemon.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      done = async () => {
        daemon.kill('SIGTERM');
        await daemon.result;
        await target.drop();
        cleanup();
      };
      await waitForOutput(daemon, /"msg":"sync cycle"/, 60_000);
    }, 90_000);
    afterAll(async () => done?.());

    it('carries pid and hostname on every log line, and logs the backfill summary', () => {
      const lines = stderr
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(lines.length).toBeGreaterThan(2);
      for (const line of lines) expect(line).toMatchObject({ pid: expect.any(Number), hostname: hostname() });
      const summary = lines.find((l) => l.msg === 'backfill complete');
      expect(summary, 'run logs the summary line `backfill` prints').toMatchObject({ phase: 'done', tickets: 12, deals: 9 });
    });

    it('shows the backfill and its catch-up sync as two rows of the status page', async () => {
      const s = (await (await fetch(`http://127.0.0.1:${port}/status.json`)).json()) as LiveCycles;
      const kinds = s.live.cycles.map((c) => c.kind).reverse();
      expect(kinds.slice(0, 2)).toEqual(['backfill', 'sync']);
      expect(s.live.cycles.find((c) => c.kind === 'backfill')!.copied).toBeGreaterThan(0);
      const page = await (await fetch(`http://127.0.0.1:${port}/`)).text();
      expect(page).toMatch(/<td>backfill<\/td>/);
    });

    it('stores an unknown won value as NULL, never 0', async () => {
      let rows: Array<Record<string, unknown>> = [];
      await poll(async () => {
        rows = (await byHand(
          dialect,
          database,
          `SELECT won_count, won_amount, won_amount_cents FROM rpt_sales_monthly WHERE currency = 'XTS'`,
        )) as typeof rows;
        return rows.length > 0;
      });
      expect(rows.map((r) => ({ ...r, won_count: Number(r.won_count) }))).toEqual([
        { won_count: 1, won_amount: null, won_amount_cents: null },
      ]);
    });

    it('a second daemon on the same http.port exits 2 naming the key to change', async () => {
      const { dir, cleanup } = tempDir();
      const other = await dialect.newDatabase();
      try {
        const r = await runCli(['run'], cliConfig(dir, { url: sim.url, database: other.database, extra: { http: { port } } }));
        expect(r.code).toBe(2);
        expect(r.stderr).toMatch(new RegExp(`http\\.port ${port} .*another wsmirror daemon.*set \`http\\.port\``));
      } finally {
        await other.drop();
        cleanup();
      }
    }, 30_000);
  });
}

describe('a newcomer at the command line', () => {
  const sim = useSimulator({ seed: 62, tickets: 3, deals: 2 });

  it('status names the missing API key when the base URL is set', async () => {
    const { dir, cleanup } = tempDir();
    const env = cliConfig(dir, { url: sim.url });
    expect((await runCli(['backfill'], env)).code).toBe(0);
    const r = await runCli(['status'], { ...env, WSMIRROR_API_KEY: undefined });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/Upstream: +the API key is missing \(baseUrl is set\): set WSMIRROR_API_KEY/);
    cleanup();
  });

  it('simulate --help shows the real default key', async () => {
    const r = await runCli(['simulate', '--help'], {});
    expect(r.stdout.replace(/\s+/g, ' ')).toMatch(/--api-key <key> .*\(default: "test-key"\)/);
    expect(r.stdout).not.toMatch(/default: \[\]/);
  });

  it('an invalid schedule names "continuous" as an accepted value', async () => {
    const { dir, cleanup } = tempDir();
    const r = await runCli(['status'], cliConfig(dir, { url: sim.url, extra: { schedule: 'every minute' } }));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/schedule: .*must be "continuous" or a croner pattern/);
    cleanup();
  });
});

describe.runIf(dialects.some((d) => d.name === 'postgres'))('a reader given a PostgreSQL URL without its schema', () => {
  const sim = useSimulator({ seed: 63, tickets: 3, deals: 2 });

  it('says the schema holds no mirror and lists the schemas that do, never advising migrate', async () => {
    const pgDialect = dialects.find((d) => d.name === 'postgres')!;
    const { dir, cleanup } = tempDir();
    const target = await pgDialect.newDatabase();
    try {
      const acme = cliConfig(dir, { url: sim.url, database: target.database, extra: { schema: 'acme' } });
      expect((await runCli(['backfill'], acme)).code).toBe(0);
      const bare = cliConfig(dir, { url: sim.url, database: target.database });
      for (const reader of [['status'], ['report'], ['verify']]) {
        const r = await runCli(reader, bare);
        expect(r.code, reader.join(' ')).toBe(2);
        expect(r.stderr).toMatch(
          /Schema `public` of .* is missing or holds no mirror; the schemas holding a mirror are `acme`: set `schema`/,
        );
        expect(r.stderr).not.toMatch(/wsmirror migrate/);
      }
    } finally {
      await target.drop();
      cleanup();
    }
  }, 60_000);
});
