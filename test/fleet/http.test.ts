import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { applyFleet } from '../../src/fleet/index.js';
import { startFleetHttp } from '../../src/fleet/http.js';
import { FleetMetrics } from '../../src/fleet/metrics.js';
import { pageReader } from '../../src/fleet/workspace-page.js';
import { SecretRedactor } from '../../src/util/redact.js';
import { silentLogger } from '../../src/log/index.js';
import { postgresDialect } from '../helpers/dialects.js';

/**
 * The worker's probes over real HTTP: /readyz follows the worker's own readiness and liveness, and
 * the token rule is the daemon's, every path but /healthz behind it (docs/fleet.md, "Seeing the fleet").
 */
describe.skipIf(!postgresDialect)('fleet worker http: /healthz, /readyz and the token', () => {
  const cleanups: Array<() => unknown> = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  async function serve(authToken?: string) {
    const { database, drop } = await postgresDialect!.newDatabase();
    cleanups.push(drop);
    const pool = new pg.Pool({ connectionString: database, max: 2 });
    cleanups.push(() => pool.end());
    await applyFleet(pool, []);
    const state = { alive: true, ready: false };
    const server: Server = await startFleetHttp({
      host: '127.0.0.1',
      port: 0,
      authToken,
      pool,
      metrics: new FleetMetrics(),
      logger: silentLogger(),
      reader: pageReader(database, new SecretRedactor()),
      alive: () => state.alive,
      ready: () => state.ready,
    });
    cleanups.push(() => new Promise((r) => server.close(r)));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const get = async (path: string, token?: string) => {
      const res = await fetch(base + path, token ? { headers: { authorization: `Bearer ${token}` } } : {});
      return { status: res.status, body: await res.text() };
    };
    return { state, get };
  }

  it('answers 503 on /readyz while starting or stopping, 200 once ready, 503 again when the queue is lost', async () => {
    const { state, get } = await serve();
    expect(await get('/readyz')).toMatchObject({ status: 503, body: expect.stringContaining('starting') });
    expect((await get('/healthz')).status).toBe(200);
    state.ready = true;
    expect(await get('/readyz')).toEqual({ status: 200, body: 'ready\n' });
    state.alive = false;
    expect(await get('/readyz')).toMatchObject({ status: 503, body: expect.stringContaining('lost its database or queue') });
    expect((await get('/healthz')).status).toBe(503);
  });

  it('with a token, leaves /healthz open and puts /readyz and every other path behind it, as run does', async () => {
    const token = 'fleet-probe-token-0123456789';
    const { state, get } = await serve(token);
    state.ready = true;
    expect((await get('/healthz')).status).toBe(200);
    for (const path of ['/readyz', '/fleet.json', '/metrics', '/']) {
      expect((await get(path)).status, `${path} without a token`).toBe(401);
      expect((await get(path, 'wrong-token')).status, `${path} with a wrong token`).toBe(401);
    }
    expect((await get('/readyz', token)).status).toBe(200);
    const fleet = await get('/fleet.json', token);
    expect(fleet.status).toBe(200);
    expect(JSON.parse(fleet.body).workspaces).toEqual([]);
    expect(fleet.body).not.toContain(token);
  });
});
