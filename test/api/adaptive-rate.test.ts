import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Pool } from 'undici';
import { createApiClient } from '../../src/api/index.js';
import { AdaptiveRateLimiter } from '../../src/api/adaptive-rate.js';
import { startSimulator, type FaultConfig, type Simulator } from '../../src/simulator/index.js';
import { mapConcurrent } from '../../src/util/concurrency.js';

// maxRequestsPerSecond "auto" against the simulator's token bucket over real HTTP. Assertions are
// on counts (requests, 429s, the rate the pacer settled on), never on how long anything took.
const ALLOWANCE = 50;
const CALLS = 400;
const KEY = 'k_auto';

let sim: Simulator;
let ticketIds: string[];

beforeAll(async () => {
  sim = await startSimulator({ apiKeys: { [KEY]: '' }, tickets: 40, deals: 5, seed: 11, control: true });
  ticketIds = sim.control.truth().tickets.map((t) => (t as { id: string }).id);
});
afterAll(() => sim?.close());

function limitTo(headers: FaultConfig['rateLimitHeaders']): void {
  sim.control.clearFaults();
  sim.control.setFaults({ rateLimitPerSecond: ALLOWANCE, rateLimitHeaders: headers });
  sim.control.clearRequests();
}

const backfillShape = () => Array.from({ length: CALLS }, (_, i) => ticketIds[i % ticketIds.length] as string);

function simulatorCounts() {
  const seen = sim.control.requests().filter((r) => r.path.startsWith('/api/v1/tickets/'));
  return { total: seen.length, limited: seen.filter((r) => r.status === 429).length };
}

describe('maxRequestsPerSecond "auto" against a token bucket', () => {
  it('a backfill-shaped load completes with under 2 % of requests answered 429 when the server states its policy', async () => {
    limitTo('all');
    const client = createApiClient({ baseUrl: sim.url, apiKey: KEY, maxRequestsPerSecond: 'auto', concurrency: 8 });
    try {
      await mapConcurrent(backfillShape(), 8, async (id) => void (await client.getTicket(id)));
    } finally {
      await client.close();
    }
    const { total, limited } = simulatorCounts();
    expect(total - limited).toBe(CALLS);
    expect(limited / total).toBeLessThan(0.02);
  });

  it('without a policy header, Remaining steers the pacer to the allowance (under 5 % 429s, rate settles below it)', async () => {
    limitTo('no-policy');
    const limiter = new AdaptiveRateLimiter({ ceiling: 200 });
    const pool = new Pool(sim.url, { connections: 8 });
    let ok = 0;
    try {
      await mapConcurrent(backfillShape(), 8, async (id) => {
        for (;;) {
          await limiter.acquire();
          const res = await pool.request({ method: 'GET', path: `/api/v1/tickets/${id}`, headers: { authorization: `Bearer ${KEY}` } });
          await res.body.dump();
          limiter.observe({ status: res.statusCode, headers: res.headers });
          if (res.statusCode === 200) {
            ok++;
            return;
          }
        }
      });
    } finally {
      await pool.close();
    }
    const { total, limited } = simulatorCounts();
    expect(ok).toBe(CALLS);
    expect(limited / total).toBeLessThan(0.05);
    // Rose well above the safe start of 5/s. How far above the allowance the last oscillation
    // reached depends on the machine's speed (a slow client drains the bucket less, so Remaining
    // invites more), so overshoot is bounded by what it costs, the 429 share above, and by the
    // hard ceiling, never by a snapshot of the rate (that bound failed 1 run in 4 under load).
    expect(limiter.rate).toBeGreaterThan(ALLOWANCE * 0.4);
    expect(limiter.rate).toBeLessThanOrEqual(200);
  });

  it('with 429s as the only signal, every call still succeeds and the hard ceiling holds', async () => {
    limitTo('none');
    const client = createApiClient({
      baseUrl: sim.url,
      apiKey: KEY,
      maxRequestsPerSecond: 'auto',
      maxRequestsPerSecondCeiling: 30,
      concurrency: 8,
    });
    try {
      await mapConcurrent(backfillShape(), 8, async (id) => void (await client.getTicket(id)));
    } finally {
      await client.close();
    }
    const { total, limited } = simulatorCounts();
    // A ceiling under the allowance: the bucket never runs dry, so no request is refused.
    expect(total).toBe(CALLS);
    expect(limited).toBe(0);
  });
});
