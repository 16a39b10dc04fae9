import { afterEach, describe, expect, it } from 'vitest';
import { DaemonTelemetry, MAX_WAIT_TIMEOUT_MS, startHealthServer } from '../../src/daemon/index.js';
import { silentLogger } from '../../src/log/index.js';

const TOKEN = 'a-token-of-sixteen-chars';
const T = '2026-03-01T12:00:00.000Z';
const at = (ms: number) => new Date(Date.parse(T) + ms).toISOString();

/**
 * GET /wait on the daemon's real http server: its answers, its bounds and its token. The as-of is
 * advanced here the way the sync's commit hook does it (DaemonTelemetry.asOfKnown); the daemon
 * end to end, a write waited for through the real CLI, is in continuous.test.ts.
 */
describe('GET /wait', () => {
  let close: (() => Promise<void>) | null = null;
  afterEach(async () => {
    await close?.();
    close = null;
  });

  async function serve(maxWaiters?: number) {
    const telemetry = new DaemonTelemetry('*/30 * * * * *', 60_000, { maxWaiters });
    const { metrics, health, waiters } = telemetry;
    const server = await startHealthServer({
      host: '127.0.0.1',
      port: 0,
      metrics,
      health,
      logger: silentLogger(),
      authToken: TOKEN,
      wait: waiters,
    });
    close = () => server.close();
    const get = async (query: string, token: string | null = TOKEN) => {
      const res = await fetch(`${server.url}/wait${query}`, token ? { headers: { authorization: `Bearer ${token}` } } : {});
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    return { telemetry, get, url: server.url };
  }

  it('answers at once when current, waits for the commit that makes it current, 504 on timeout, 400 for bad input, 503 on a standby', async () => {
    const { telemetry, get } = await serve();
    expect((await get(`?until=${T}`)).status).toBe(503); // still a standby
    telemetry.leader(true);
    telemetry.asOfKnown({ asOf: T, recordedAt: T, readFloor: at(1000), overlapSeconds: 1, heldBy: null });
    expect(await get(`?until=${at(-5000)}`)).toMatchObject({ status: 200, body: { status: 'current', currentAsOf: T } });
    expect((await get(`?until=${T}`, null)).status).toBe(401);

    const pending = get(`?until=${encodeURIComponent('2026-03-01T13:00:02+01:00')}&timeoutMs=60000`);
    // Registered before the as-of moves: the answer must come from the commit, not from the first look.
    while (telemetry.waiters.size === 0) await new Promise((r) => setImmediate(r));
    telemetry.asOfKnown({ asOf: at(1000), recordedAt: T, readFloor: at(2000), overlapSeconds: 1, heldBy: null });
    expect(telemetry.waiters.size).toBe(1); // 12:00:01 is not yet 12:00:02
    telemetry.asOfKnown({ asOf: at(2500), recordedAt: T, readFloor: at(3500), overlapSeconds: 1, heldBy: null });
    expect(await pending).toMatchObject({ status: 200, body: { until: at(2000), currentAsOf: at(2500) } });

    expect(await get(`?until=${at(60_000)}&timeoutMs=0`)).toMatchObject({
      status: 504,
      body: { status: 'timeout', currentAsOf: at(2500) },
    });
    for (const bad of [
      '',
      '?until=yesterday',
      `?until=${T.slice(0, 19)}`,
      `?until=${T}&timeoutMs=-1`,
      `?until=${T}&timeoutMs=${MAX_WAIT_TIMEOUT_MS + 1}`,
    ]) {
      const r = await get(bad);
      expect(r.status, bad).toBe(400);
      expect(String(r.body.error), bad).toMatch(/until|timeoutMs/);
    }
    telemetry.health.state.role = 'stopping';
    expect((await get(`?until=${T}`)).status).toBe(503);
  });

  it('holds at most its bound of waiters, refuses more with 429, and frees a slot when a client goes away', async () => {
    const { telemetry, get, url } = await serve(50);
    const { waiters } = telemetry;
    telemetry.leader(true);
    const until = at(10_000);
    const held = Array.from({ length: 50 }, () => get(`?until=${until}&timeoutMs=60000`));
    while (waiters.size < 50) await new Promise((r) => setImmediate(r));
    const refused = await Promise.all(Array.from({ length: 20 }, () => get(`?until=${until}&timeoutMs=60000`)));
    expect(refused.map((r) => r.status)).toEqual(Array(20).fill(429));
    expect(waiters.size).toBe(50);

    telemetry.asOfKnown({ asOf: until, recordedAt: T, readFloor: until, overlapSeconds: 1, heldBy: null });
    expect((await Promise.all(held)).map((r) => r.status)).toEqual(Array(50).fill(200));
    expect(waiters.size).toBe(0);

    // A client that goes away leaves no waiter behind.
    const gone = new AbortController();
    const leaving = fetch(`${url}/wait?until=${at(20_000)}&timeoutMs=60000`, {
      headers: { authorization: `Bearer ${TOKEN}` },
      signal: gone.signal,
    }).catch(() => 'aborted');
    while (waiters.size === 0) await new Promise((r) => setImmediate(r));
    gone.abort();
    expect(await leaving).toBe('aborted');
    while (waiters.size > 0) await new Promise((r) => setImmediate(r));
  });
});
