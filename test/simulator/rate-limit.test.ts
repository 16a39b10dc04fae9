import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { start, type Client } from './helpers.js';

// A trickle of 0.01 tokens/s refills one token per 100 s of simulated time, so real time passing
// during a test never adds a token: only advanceClock does.
const TRICKLE = { rateLimitPerSecond: 0.01, rateLimitBurst: 3 };

let c: Client;
beforeAll(async () => {
  c = await start({ tickets: 5, deals: 2, seed: 3, control: true });
});
afterAll(() => c.sim.close());

const header = (r: { headers: Headers }, name: string) => r.headers.get(name);

describe('token-bucket rate limit', () => {
  it('lets a burst through, then answers 429 with Retry-After until the bucket refills', async () => {
    c.sim.control.setFaults(TRICKLE);
    const remaining: (string | null)[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await c.get('/api/v1/pipelines');
      expect(r.status).toBe(200);
      remaining.push(header(r, 'ratelimit-remaining'));
    }
    expect(remaining).toEqual(['2', '1', '0']);
    const limited = await c.get('/api/v1/tickets');
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('rate_limited');
    expect(Number(header(limited, 'retry-after'))).toBeGreaterThanOrEqual(99);
    expect(header(limited, 'ratelimit-remaining')).toBe('0');
    // A 429 costs no token: after one token's worth of time exactly one request passes again.
    expect((await c.get('/api/v1/tickets')).status).toBe(429);
    c.sim.control.advanceClock(100_000);
    expect((await c.get('/api/v1/tickets')).status).toBe(200);
    expect((await c.get('/api/v1/tickets')).status).toBe(429);
    c.sim.control.clearFaults();
  });

  it('sends RateLimit-*, RateLimit-Policy and X-RateLimit-* on every response while enabled, and none when off', async () => {
    expect(header(await c.get('/api/v1/pipelines'), 'ratelimit-limit')).toBeNull();
    c.sim.control.setFaults(TRICKLE);
    const ok = await c.get('/api/v1/pipelines');
    expect(header(ok, 'ratelimit-limit')).toBe('3');
    expect(header(ok, 'x-ratelimit-limit')).toBe('3');
    expect(header(ok, 'x-ratelimit-remaining')).toBe('2');
    expect(header(ok, 'ratelimit-policy')).toBe('3;w=300');
    // One token short of full: 100 s, as delta seconds and as a Unix time.
    expect(Number(header(ok, 'ratelimit-reset'))).toBe(100);
    const epoch = Number(header(ok, 'x-ratelimit-reset'));
    expect(Math.abs(epoch - (Date.now() / 1000 + 100))).toBeLessThan(5);
    // Errors carry them too, the 401 of a wrong key included.
    const unauthorized = await c.get('/api/v1/pipelines', 'wrong-key');
    expect(unauthorized.status).toBe(401);
    expect(header(unauthorized, 'ratelimit-remaining')).toBe('1');
    c.sim.control.setFaults({ rateLimitHeaders: 'no-policy' });
    const noPolicy = await c.get('/api/v1/pipelines');
    expect(header(noPolicy, 'ratelimit-policy')).toBeNull();
    expect(header(noPolicy, 'ratelimit-remaining')).toBe('0');
    c.sim.control.setFaults({ rateLimitHeaders: 'none' });
    const bare = await c.get('/api/v1/pipelines');
    expect(bare.status).toBe(429);
    expect(header(bare, 'ratelimit-limit')).toBeNull();
    expect(header(bare, 'retry-after')).not.toBeNull();
    c.sim.control.clearFaults();
  });

  it('starts a full bucket when the rate or size changes, and honours paths and the Retry-After format', async () => {
    c.sim.control.setFaults({ ...TRICKLE, rateLimitBurst: 1, paths: ['/api/v1/deals'] });
    expect((await c.get('/api/v1/deals')).status).toBe(200);
    expect((await c.get('/api/v1/deals')).status).toBe(429);
    const exempt = await c.get('/api/v1/tickets');
    expect(exempt.status).toBe(200);
    expect(header(exempt, 'ratelimit-limit')).toBeNull();
    c.sim.control.setFaults({ rateLimitBurst: 2, retryAfterFormat: 'http-date' });
    expect((await c.get('/api/v1/deals')).status).toBe(200);
    expect((await c.get('/api/v1/deals')).status).toBe(200);
    const dated = await c.get('/api/v1/deals');
    expect(dated.status).toBe(429);
    expect(Date.parse(header(dated, 'retry-after') ?? '')).toBeGreaterThan(Date.now() + 90_000);
    c.sim.control.clearFaults();
  });

  it('is configurable over the HTTP control surface and rejects a bad header mode', async () => {
    const post = (body: unknown) =>
      fetch(`${c.sim.url}/_control/faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    expect((await post({ rateLimitPerSecond: 0.01, rateLimitBurst: 1 })).status).toBe(200);
    expect((await c.get('/api/v1/pipelines')).status).toBe(200);
    expect((await c.get('/api/v1/pipelines')).status).toBe(429);
    const bad = await post({ rateLimitHeaders: 'some' });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toMatch(/rateLimitHeaders/);
    expect((await post({ rateLimitPerSecond: -1 })).status).toBe(400);
    await fetch(`${c.sim.url}/_control/faults`, { method: 'DELETE' });
    expect((await c.get('/api/v1/pipelines')).status).toBe(200);
  });
});
