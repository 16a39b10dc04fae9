import { inspect } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import {
  AuthRejectedError,
  createApiClient,
  CursorRejectedError,
  InvalidRecordError,
  NotFoundError,
  RateLimitedError,
  UpstreamRejectedError,
  UpstreamUnavailableError,
  type ApiClient,
  type ApiClientOptions,
} from '../../src/api/index.js';
import { json, startFixture, type Fixture, type Handler } from './http-fixture.js';
import { deal, event, message, ticket } from './records.js';

const KEY = 'sk_live_SUPER_SECRET_0123456789';
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function setup(handler: Handler, options: Partial<ApiClientOptions> = {}): Promise<{ fx: Fixture; client: ApiClient }> {
  const fx = await startFixture(handler);
  const client = createApiClient({
    baseUrl: fx.url,
    apiKey: KEY,
    retry: { minDelayMs: 5, maxDelayMs: 50 },
    maxRequestsPerSecond: 1000,
    ...options,
  });
  cleanups.push(
    () => fx.close(),
    () => client.close(),
  );
  return { fx, client };
}

/** The record id a single-record request asked for, so the fixture answers with that record. */
const idOf = (req: { url?: string }) => decodeURIComponent((req.url ?? '').split('/').pop() ?? '');

const gaps = (fx: Fixture) => fx.log.slice(1).map((r, i) => r.at - fx.log[i]!.at);

describe('request basics', () => {
  it('sends bearer key, User-Agent and Accept, under the base path', async () => {
    const { fx, client } = await setup((req, res) => json(res, 200, { deal: deal({ id: idOf(req) }) }));
    const c2 = createApiClient({ baseUrl: `${fx.url}/ws/`, apiKey: KEY });
    cleanups.push(() => c2.close());
    await client.getDeal('d 1');
    await c2.getDeal('d_1');
    expect(fx.log[0]!.url).toBe('/api/v1/deals/d%201');
    expect(fx.log[1]!.url).toBe('/ws/api/v1/deals/d_1');
    expect(fx.log[0]!.headers).toMatchObject({
      authorization: `Bearer ${KEY}`,
      'user-agent': 'wsmirror/0.1.0',
      accept: 'application/json',
    });
  });

  it('normalises a deal read and counts bytes and statuses', async () => {
    const { client } = await setup((_req, res) => json(res, 200, { deal: deal({ amount: 7.5 }) }));
    expect((await client.getDeal('d_1')).amount).toBe('7.50');
    const s = client.stats();
    expect(s).toMatchObject({ requests: 1, retries: 0, byStatus: { '200': 1 } });
    expect(s.bytesIn).toBeGreaterThan(100);
  });
});

describe('retries', () => {
  it('retries 5xx until success and reports each attempt', async () => {
    const events: Array<{ status: number | null; attempt: number }> = [];
    const { fx, client } = await setup(
      (_req, res, n) => (n <= 2 ? json(res, n === 1 ? 503 : 500, { error: 'busy' }) : json(res, 200, { deal: deal() })),
      {
        onRequest: (e) => events.push({ status: e.status, attempt: e.attempt }),
      },
    );
    await client.getDeal('d_1');
    expect(fx.log).toHaveLength(3);
    expect(events).toEqual([
      { status: 503, attempt: 1 },
      { status: 500, attempt: 2 },
      { status: 200, attempt: 3 },
    ]);
    expect(client.stats()).toMatchObject({ requests: 3, retries: 2, byStatus: { '503': 1, '500': 1, '200': 1 } });
  });

  it('honours Retry-After seconds on 429 (measured by the server)', async () => {
    const { fx, client } = await setup(
      (_req, res, n) => (n === 1 ? json(res, 429, { error: 'slow down' }, { 'retry-after': '1' }) : json(res, 200, { deal: deal() })),
      { retry: { minDelayMs: 5, maxDelayMs: 5000 } },
    );
    await client.getDeal('d_1');
    expect(fx.log).toHaveLength(2);
    expect(gaps(fx)[0]).toBeGreaterThanOrEqual(990);
    expect(client.stats().rateLimited).toBe(1);
  });

  it('honours an HTTP-date Retry-After and caps it at maxDelayMs', async () => {
    const later = new Date(Date.now() + 3_600_000).toUTCString();
    const { fx, client } = await setup(
      (_req, res, n) => (n === 1 ? json(res, 503, {}, { 'retry-after': later }) : json(res, 200, { deal: deal() })),
      { retry: { minDelayMs: 5, maxDelayMs: 300 } },
    );
    await client.getDeal('d_1');
    const gap = gaps(fx)[0]!;
    expect(gap).toBeGreaterThanOrEqual(290);
    // Capped: an hour's wait would time the test out; any load-induced delay stays far below this.
    expect(gap).toBeLessThan(30_000);
  });

  it('gives up on 429 with RATE_LIMITED after maxAttempts', async () => {
    const { fx, client } = await setup((_req, res) => json(res, 429, { error: 'no' }, { 'retry-after': '0' }), {
      retry: { maxAttempts: 3, minDelayMs: 1, maxDelayMs: 5 },
    });
    const err = await client.getDeal('d_1').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitedError);
    expect(err).toMatchObject({ code: 'RATE_LIMITED', status: 429, attempts: 3, path: '/api/v1/deals/d_1', body: { error: 'no' } });
    expect(fx.log).toHaveLength(3);
  });

  it('retries a dropped connection', async () => {
    const { fx, client } = await setup((req, res, n) => (n === 1 ? req.socket.destroy() : json(res, 200, { deal: deal() })));
    await client.getDeal('d_1');
    expect(fx.log).toHaveLength(2);
    expect(client.stats()).toMatchObject({ networkErrors: 1, retries: 1 });
  });

  it('retries a timeout, then fails with UPSTREAM_UNAVAILABLE', async () => {
    const { fx, client } = await setup(() => undefined /* never answers */, {
      requestTimeoutMs: 150,
      retry: { maxAttempts: 3, minDelayMs: 5, maxDelayMs: 10 },
    });
    const err = await client.getDeal('d_1').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamUnavailableError);
    expect(err).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', status: null, attempts: 3 });
    expect((err as Error).message).toMatch(/timeout/);
    expect(fx.log).toHaveLength(3);
    expect(client.stats()).toMatchObject({ timeouts: 3, retries: 2 });
  });

  it('fails with UPSTREAM_UNAVAILABLE when nothing listens', async () => {
    const fx = await startFixture(() => undefined);
    await fx.close();
    const client = createApiClient({ baseUrl: fx.url, apiKey: KEY, retry: { maxAttempts: 2, minDelayMs: 1, maxDelayMs: 2 } });
    cleanups.push(() => client.close());
    await expect(client.getDeal('d_1')).rejects.toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', attempts: 2 });
    expect(client.stats().networkErrors).toBe(2);
  });

  it('stops waiting at once when the signal aborts', async () => {
    const ac = new AbortController();
    const { fx, client } = await setup((_req, res) => json(res, 503, {}, { 'retry-after': '30' }), {
      signal: ac.signal,
      retry: { maxDelayMs: 60_000 },
    });
    const started = performance.now();
    const p = client.getDeal('d_1');
    while (fx.log.length === 0) await new Promise((r) => setTimeout(r, 5));
    ac.abort(new Error('shutting down'));
    await expect(p).rejects.toThrow('shutting down');
    // Not the 30 s Retry-After: the abort ended the wait (the margin only absorbs a loaded machine).
    expect(performance.now() - started).toBeLessThan(20_000);
  });
});

describe('final errors', () => {
  it('401 is AUTH_REJECTED after exactly one request', async () => {
    const { fx, client } = await setup((_req, res) => json(res, 401, { error: 'bad key' }));
    const err = await client.ticketsPage({}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AuthRejectedError);
    expect((err as Error).message).toMatch(/rejected the API key \(401\).*WSMIRROR_API_KEY/);
    expect(fx.log).toHaveLength(1);
  });

  it("403 is AUTH_REJECTED on a list, but one record's own problem (UPSTREAM_REJECTED) on a single read", async () => {
    const { client } = await setup((_req, res) => json(res, 403, {}));
    await expect(client.eventsPage({ limit: 1 })).rejects.toMatchObject({ code: 'AUTH_REJECTED', status: 403 });
    await expect(client.getDeal('d_1')).rejects.toMatchObject({ code: 'UPSTREAM_REJECTED', status: 403 });
  });

  it('a body for another id than the one asked for is INVALID_RECORD under the asked id', async () => {
    const { client } = await setup((_req, res) => json(res, 200, { deal: deal({ id: 'd_other' }) }));
    await expect(client.getDeal('d_1')).rejects.toMatchObject({
      code: 'INVALID_RECORD',
      entityId: 'd_1',
      reason: expect.stringMatching(/d_other/),
    });
  });

  it('a rejected cursor is CURSOR_REJECTED; without a cursor 404 is NOT_FOUND and 422 UPSTREAM_REJECTED', async () => {
    const { fx, client } = await setup((req, res) => {
      if (req.url?.includes('cursor=')) return json(res, 410, { error: 'cursor expired' });
      if (req.url?.startsWith('/api/v1/tickets/')) return json(res, 404, { error: 'no such ticket' });
      return json(res, 422, { error: 'bad limit' });
    });
    await expect(client.eventsPage({ since: '2024-01-01T00:00:00Z', cursor: 'abc' })).rejects.toBeInstanceOf(CursorRejectedError);
    await expect(client.getTicket('t_9')).rejects.toBeInstanceOf(NotFoundError);
    await expect(client.eventsPage({ limit: 1000 })).rejects.toBeInstanceOf(UpstreamRejectedError);
    expect(fx.log).toHaveLength(3);
    expect(fx.log[0]!.url).toBe('/api/v1/events?since=2024-01-01T00%3A00%3A00Z&cursor=abc&limit=100');
  });

  it('a non-JSON 200 or a wrong envelope is INVALID_RESPONSE', async () => {
    const { client } = await setup((req, res) => {
      if (req.url?.startsWith('/api/v1/deals/')) {
        res.writeHead(200, { 'content-type': 'text/html' });
        return void res.end('<html>login</html>');
      }
      if (req.url?.startsWith('/api/v1/tickets')) return json(res, 200, { tickets: [], nextCursor: 5 });
      return json(res, 200, { items: [] });
    });
    await expect(client.getDeal('d_1')).rejects.toMatchObject({ code: 'INVALID_RESPONSE' });
    await expect(client.ticketsPage({})).rejects.toMatchObject({ code: 'INVALID_RESPONSE' });
    await expect(client.eventsPage({})).rejects.toMatchObject({ code: 'INVALID_RESPONSE' });
    await expect(client.listPipelines()).rejects.toMatchObject({ code: 'INVALID_RESPONSE' });
  });
});

describe('bad records', () => {
  it('a page with one invalid record returns the others and reports it', async () => {
    const bad = ticket({ id: 't_2', updatedAt: 'last tuesday' });
    const { client } = await setup((_req, res) =>
      json(res, 200, { tickets: [ticket(), bad, ticket({ id: 't_3', status: 'brand_new' })], nextCursor: null }),
    );
    const page = await client.ticketsPage({ status: 'unresolved' });
    expect(page.items.map((t) => t.id)).toEqual(['t_1', 't_3']);
    expect(page.invalid).toEqual([
      { entityType: 'ticket', id: 't_2', reason: 'updatedAt: not a valid ISO 8601 timestamp (got "last tuesday")', raw: bad },
    ]);
    expect(page.nextCursor).toBeNull();
  });

  it('getTicket with an invalid message throws INVALID_RECORD carrying the raw record', async () => {
    const raw = { ...ticket({ id: 't_7' }), messages: [message(), message({ id: 'm_2', createdAt: 'never' })] };
    const { client } = await setup((_req, res) => json(res, 200, { ticket: raw }));
    const err = await client.getTicket('t_7').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidRecordError);
    expect(err).toMatchObject({
      code: 'INVALID_RECORD',
      entityType: 'ticket',
      entityId: 't_7',
      raw,
      reason: expect.stringMatching(/^messages\.1\.createdAt/),
    });
  });

  it('pipelines are validated one by one', async () => {
    const good = { id: 'p', name: 'Sales', dealCount: 1, stages: [{ id: 's', name: 'Lead', position: 0, isWon: false, isLost: false }] };
    const { client } = await setup((_req, res) => json(res, 200, { pipelines: [good, { ...good, id: 'q', dealCount: null }] }));
    const { items, invalid } = await client.listPipelines();
    expect(items.map((p) => p.id)).toEqual(['p']);
    expect(invalid[0]).toMatchObject({ entityType: 'pipeline', id: 'q', reason: expect.stringMatching(/^dealCount/) });
  });
});

describe('paging', () => {
  it('iterates pages by cursor until nextCursor is null, keeping the filters', async () => {
    const { fx, client } = await setup(
      (req, res) => {
        const cursor = new URL(req.url ?? '', 'http://x').searchParams.get('cursor');
        const n = cursor === null ? 0 : Number(cursor);
        json(res, 200, { events: [event({ id: `e_${n}` })], nextCursor: n < 2 ? String(n + 1) : null });
      },
      { pageSize: 1 },
    );
    const ids: string[] = [];
    for await (const page of client.iterateEvents({ since: '2024-01-01T00:00:00.000Z' })) ids.push(...page.items.map((e) => e.id));
    expect(ids).toEqual(['e_0', 'e_1', 'e_2']);
    expect(fx.log.map((r) => r.url)).toEqual([
      '/api/v1/events?since=2024-01-01T00%3A00%3A00.000Z&limit=1',
      '/api/v1/events?since=2024-01-01T00%3A00%3A00.000Z&cursor=1&limit=1',
      '/api/v1/events?since=2024-01-01T00%3A00%3A00.000Z&cursor=2&limit=1',
    ]);
  });

  it('refuses a server that repeats a cursor', async () => {
    const { client } = await setup((_req, res) => json(res, 200, { deals: [], nextCursor: 'same' }));
    const run = async () => {
      for await (const _ of client.iterateDeals()) void _;
    };
    await expect(run()).rejects.toMatchObject({ code: 'PAGING_RUNAWAY' });
  });

  it('refuses endless distinct cursors over empty pages', async () => {
    const { fx, client } = await setup((_req, res, n) => json(res, 200, { deals: [], nextCursor: `c${n}` }));
    const run = async () => {
      for await (const _ of client.iterateDeals()) void _;
    };
    await expect(run()).rejects.toMatchObject({ code: 'PAGING_RUNAWAY' });
    expect(fx.log.length).toBeLessThanOrEqual(6);
  });
});

describe('pacing', () => {
  it('keeps request starts under maxRequestsPerSecond, retries included', async () => {
    // Each attempt's start on the client's own clock: its report time less its (rounded) duration.
    const starts: number[] = [];
    const { fx, client } = await setup(
      (req, res, n) => (n === 3 ? json(res, 503, {}) : json(res, 200, { deal: deal({ id: idOf(req) }) })),
      {
        maxRequestsPerSecond: 10,
        retry: { minDelayMs: 0, maxDelayMs: 0 },
        onRequest: (e) => starts.push(performance.now() - e.durationMs),
      },
    );
    await Promise.all(Array.from({ length: 14 }, (_, i) => client.getDeal(`d_${i}`)));
    expect(fx.log).toHaveLength(15);
    expect(starts).toHaveLength(15);
    // No one-second window holds more than 10 starts (1 ms slack for the rounded durations).
    // Measured where the limiter acts, not where the server sees arrivals: a loaded machine may
    // deliver two paced requests close together, which says nothing about the pacing.
    for (const start of starts) expect(starts.filter((t) => t >= start + 1 && t < start + 999).length).toBeLessThanOrEqual(9);
    // 15 starts need ~1.4 s (unpaced they would all land within a few ms); delays only lengthen it.
    const at = fx.log.map((r) => r.at);
    expect(at[14]! - at[0]!).toBeGreaterThanOrEqual(1300);
  });

  it('keeps at most `concurrency` requests in flight', async () => {
    const { fx, client } = await setup(
      (req, res) => {
        setTimeout(() => json(res, 200, { deal: deal({ id: idOf(req) }) }), 40);
      },
      { concurrency: 3 },
    );
    await Promise.all(Array.from({ length: 12 }, (_, i) => client.getDeal(`d_${i}`)));
    expect(fx.log).toHaveLength(12);
    expect(fx.peakInFlight()).toBe(3);
  });
});

describe('the API key never leaks', () => {
  it('is absent from every error form, even when the server echoes it', async () => {
    const { client } = await setup(
      (req, res) => {
        if (req.url?.includes('/deals/')) return json(res, 500, { echoed: req.headers.authorization, note: `key ${KEY}` });
        if (req.url?.includes('/tickets/')) {
          res.writeHead(400, { 'content-type': 'text/plain' });
          return void res.end(`bad request from ${req.headers.authorization}`);
        }
        return req.socket.destroy();
      },
      { retry: { maxAttempts: 2, minDelayMs: 1, maxDelayMs: 2 } },
    );
    const errors = [
      await client.getDeal('d_1').catch((e: unknown) => e),
      await client.getTicket('t_1').catch((e: unknown) => e),
      await client.eventsPage({}).catch((e: unknown) => e),
    ];
    for (const err of errors) {
      expect(err).toBeInstanceOf(Error);
      const forms = [JSON.stringify(err), inspect(err, { depth: 10, showHidden: true }), String(err), (err as Error).stack ?? ''];
      for (const form of forms) expect(form).not.toContain(KEY);
    }
    expect(JSON.stringify(errors[0])).toContain('[redacted]');
    expect((errors[2] as Error).cause).toBeInstanceOf(Error);
  });

  it('is absent from logs and from the metrics hook', async () => {
    const lines: string[] = [];
    const logger = {
      debug: (o: object, m?: string) => lines.push(JSON.stringify(o) + m),
      warn: (o: object, m?: string) => lines.push(JSON.stringify(o) + m),
    };
    const { client } = await setup((_req, res, n) => (n === 1 ? json(res, 502, {}) : json(res, 401, {})), {
      logger,
      onRequest: (e) => lines.push(JSON.stringify(e)),
    });
    await client.getDeal('d_1').catch(() => undefined);
    expect(lines.length).toBeGreaterThanOrEqual(4);
    for (const l of lines) expect(l).not.toContain(KEY);
  });
});

describe('per-call signals', () => {
  it('abort one queued call without disturbing the others', async () => {
    const { fx, client } = await setup(
      (req, res) => {
        setTimeout(() => json(res, 200, { ticket: { ...ticket({ id: idOf(req) }), messages: [message()] } }), 50);
      },
      { concurrency: 1 },
    );
    const ac = new AbortController();
    const first = client.getTicket('t_1');
    const second = client.getTicket('t_2', { signal: ac.signal }).catch((e: unknown) => e);
    const third = client.getTicket('t_3');
    ac.abort(new Error('not needed any more'));
    expect(await second).toMatchObject({ message: 'not needed any more' });
    expect((await first).messages).toHaveLength(1);
    expect((await third).id).toBe('t_3');
    expect(fx.log.map((r) => r.url)).toEqual(['/api/v1/tickets/t_1', '/api/v1/tickets/t_3']);
  });
});

describe('close', () => {
  it('ends pending retry waits with CLIENT_CLOSED and refuses new calls', async () => {
    const { fx, client } = await setup((_req, res) => json(res, 503, {}, { 'retry-after': '30' }), { retry: { maxDelayMs: 60_000 } });
    const pending = client.getDeal('d_1').catch((e: unknown) => e);
    while (fx.log.length === 0) await new Promise((r) => setTimeout(r, 5));
    await client.close();
    expect(await pending).toMatchObject({ code: 'CLIENT_CLOSED' });
    await expect(client.getDeal('d_2')).rejects.toMatchObject({ code: 'CLIENT_CLOSED' });
    await client.close();
  });
});
