import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFleet } from '../../src/fleet/config.js';
import { applyFleet, openFleetPool } from '../../src/fleet/db.js';
import { startFleetHttp } from '../../src/fleet/http.js';
import { FleetMetrics } from '../../src/fleet/metrics.js';
import { runSlice, type SliceEnv } from '../../src/fleet/slice.js';
import { pageReader } from '../../src/fleet/workspace-page.js';
import { createLogger } from '../../src/log/index.js';
import { startSimulator, type MultiSimulator } from '../../src/simulator/index.js';
import { openSharedPostgres, type SharedPostgres } from '../../src/store/index.js';
import { SecretRedactor } from '../../src/util/redact.js';
import { postgresDialect } from '../helpers/dialects.js';
import { Agent } from 'undici';
import { tempDir } from '../helpers/tmp.js';

/**
 * A workspace's own status page on a worker's server (issue 48: the fleet page links "to that
 * workspace's own status page"): the page `run` serves for one mirror, read from that workspace's
 * schema, with the fleet's line above it. From empty mirrors, through slices run in this process
 * against the simulator over loopback and the real PostgreSQL, then read over real HTTP.
 */
describe.skipIf(postgresDialect === null)('a workspace page on the fleet server (PostgreSQL only: a fleet needs it)', () => {
  let sim: MultiSimulator;
  let pool: pg.Pool;
  let shared: SharedPostgres;
  const agent = new Agent();
  let env: SliceEnv;
  let server: Server;
  let base: string;
  let drop: () => Promise<void>;
  const reader = { end: () => Promise.resolve() };
  const tmp = tempDir('wsmirror-wspage-');
  const keys: string[] = [];
  const token = 'fleet-page-token-0123456789';
  const get = async (path: string) => {
    const res = await fetch(base + path, { headers: { authorization: `Bearer ${token}` } });
    return {
      status: res.status,
      type: res.headers.get('content-type') ?? '',
      csp: res.headers.get('content-security-policy'),
      body: await res.text(),
    };
  };

  beforeAll(async () => {
    sim = await startSimulator({ workspaces: [{ id: 'acme' }, { id: 'beta' }, { id: 'gone' }, { id: 'later' }], tickets: 8, deals: 3 });
    const target = await postgresDialect!.newDatabase();
    drop = target.drop;
    const keyFile = (id: string, key = sim.workspace(id).apiKey) => {
      const file = join(tmp.dir, `${id}.key`);
      writeFileSync(file, `${key}\n`);
      keys.push(key);
      return file;
    };
    const entry = (id: string, schema: string, key?: string) => ({
      id,
      schema,
      baseUrl: sim.workspace(id).baseUrl,
      apiKeyFile: keyFile(id, key),
      schedule: 'continuous',
      eventsRetentionDays: 45,
      retry: { maxAttempts: 1 },
    });
    const fleet = parseFleet({
      database: target.database,
      workspaces: [
        entry('acme', 'mirror_acme'),
        entry('beta', 'mirror_beta'),
        entry('gone', 'mirror_gone', 'a-key-the-workspace-never-issued-0123'),
        entry('later', 'mirror_later'),
      ],
    });
    pool = openFleetPool(target.database, 2);
    shared = await openSharedPostgres(target.database, 3);
    await applyFleet(pool, fleet.workspaces);
    const redactor = new SecretRedactor();
    env = {
      pool,
      shared,
      agent,
      database: target.database,
      logger: createLogger({ level: 'silent', redactor }),
      logLevel: 'silent',
      redactor,
      sliceSeconds: 30,
      stop: new AbortController().signal,
      workerId: 'test',
    };
    const pages = pageReader(target.database, redactor);
    reader.end = () => pages.end();
    server = await startFleetHttp({
      host: '127.0.0.1',
      port: 0,
      authToken: token,
      pool,
      metrics: new FleetMetrics(),
      logger: createLogger({ level: 'silent', redactor }),
      reader: pages,
      alive: () => true,
      ready: () => true,
    });
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((r) => server?.close(r));
    await reader.end();
    await agent.close();
    await shared?.end();
    await pool?.end();
    await sim?.close();
    await drop?.();
    tmp.cleanup();
  });

  /** Slices of one workspace until its backfill is done and a sync succeeded. */
  async function untilSynced(id: string): Promise<void> {
    let report = await runSlice(env, id);
    for (let i = 0; i < 20 && (report.kind !== 'sync' || !report.ok); i++) report = await runSlice(env, id);
    expect(report).toMatchObject({ kind: 'sync', ok: true });
  }

  it("serves each workspace's own mirror: its runs, its as-of, its quarantine, read from its schema", async () => {
    await untilSynced('acme');
    const bad = (sim.workspace('acme').control.truth().deals as Array<{ id: string }>)[0]!.id;
    sim.workspace('acme').control.corrupt('deal', bad, 'bad-timestamp');
    sim.workspace('acme').control.act(3);
    expect(await runSlice(env, 'acme')).toMatchObject({ kind: 'sync', ok: true });
    await untilSynced('beta');

    const page = await get('/workspaces/acme');
    expect(page).toMatchObject({ status: 200, type: expect.stringContaining('text/html') });
    // The daemon's page, under the fleet's: its CSP, a way back up, the fleet's line, its own JSON.
    expect(page.csp).toContain("default-src 'none'");
    expect(page.body).toContain('<a id="up" href="/">← fleet</a>');
    expect(page.body).toMatch(
      /<p id="frame-note">Fleet: current; schema &quot;mirror_acme&quot;; next slice due [^<]+; \d+ request\(s\) in the last minute<\/p>/,
    );
    expect(page.body).toContain('href="/workspaces/acme/status.json"');
    expect(page.body).toMatch(/<div id="state" class="idle">Idle: the last cycle succeeded/);
    expect(page.body).toContain('id="current-as-of"');
    expect(page.body).toMatch(/<table id="cycles">[\s\S]*backfill[\s\S]*<\/table>/);
    expect(page.body).toMatch(/<table id="quarantine">[\s\S]*deal[\s\S]*<\/table>/);
    expect(page.body).toContain(`<td>${bad}</td>`);

    // The JSON is `status --json`'s report of that schema, and the fleet's line without its options.
    const acme = JSON.parse((await get('/workspaces/acme/status.json')).body);
    const beta = JSON.parse((await get('/workspaces/beta/status.json')).body);
    expect(acme.database).toContain('schema mirror_acme');
    expect(beta.database).toContain('schema mirror_beta');
    expect(acme.backfill.phase).toBe('done');
    expect(acme.events.retentionDays).toBe(45);
    expect(acme.quarantinedByType).toEqual({ deal: 1 });
    expect(beta.quarantinedByType).toEqual({});
    expect(acme.live).toMatchObject({ source: 'mirror', state: { kind: 'idle' } });
    expect(acme.currentAsOf.asOf).toEqual(expect.any(String));
    expect(acme.fleet).toMatchObject({ id: 'acme', schema: 'mirror_acme', state: 'current' });
    expect(acme.fleet.settings).toBeUndefined();
    // Runs are the workspace's own: beta's are not acme's.
    const started = (r: { recentRuns: Array<{ started_at: string }> }) => new Set(r.recentRuns.map((x) => x.started_at));
    for (const s of started(beta)) expect(started(acme).has(s)).toBe(false);
  });

  it('shows a revoked key as failing, a workspace with no schema yet says so, and an unknown one is 404', async () => {
    const gone = await runSlice(env, 'gone');
    expect(gone.ok).toBe(false);
    const page = await get('/workspaces/gone');
    expect(page.status).toBe(200);
    expect(page.body).toMatch(/<div id="state" class="failing">Failing: AUTH_REJECTED: The workspace rejected the API key/);
    expect(page.body).toMatch(
      /<p id="frame-note">Fleet: key_rejected; schema &quot;mirror_gone&quot;; next slice due [^<]+; last error [^<]+: AUTH_REJECTED: /,
    );
    expect(page.body).toContain('No slice has created the mirror in schema &quot;mirror_gone&quot; yet.');

    const later = await get('/workspaces/later');
    expect(later.status).toBe(200);
    expect(later.body).toContain('No slice has created the mirror in schema &quot;mirror_later&quot; yet.');
    const laterJson = await get('/workspaces/later/status.json');
    expect(laterJson).toMatchObject({ status: 503, body: expect.stringContaining('has no mirror yet') });

    expect((await get('/workspaces/nobody')).status).toBe(404);
    expect((await get('/workspaces/acme/other')).status).toBe(404);
    expect((await fetch(`${base}/workspaces/acme`)).status).toBe(401);
  });

  it('puts no API key and no database password on any page', async () => {
    const bodies = await Promise.all(
      ['/', '/fleet.json', '/workspaces/acme', '/workspaces/acme/status.json', '/workspaces/gone', '/workspaces/gone/status.json'].map(
        async (p) => (await get(p)).body,
      ),
    );
    const all = bodies.join('\n');
    for (const key of keys) expect(all.includes(key), 'an API key on a page').toBe(false);
  });
});
