import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { start, type Client, type Wire } from './helpers.js';

let c: Client;
beforeAll(async () => {
  c = await start({ tickets: 20, deals: 10, seed: 9, control: true });
});
afterAll(() => c.sim.close());

describe('faults', () => {
  it('failNext answers the next matching requests with the given status, then recovers', async () => {
    c.sim.control.failNext({ status: 503, count: 2, path: '/api/v1/events' });
    expect((await c.get('/api/v1/tickets?limit=1')).status).toBe(200);
    const a = await c.get('/api/v1/events');
    expect(a.status).toBe(503);
    expect(a.body.error.code).toBe('service_unavailable');
    expect((await c.get('/api/v1/events')).status).toBe(503);
    expect((await c.get('/api/v1/events')).status).toBe(200);
  });

  it('429 carries Retry-After in seconds or as an HTTP date', async () => {
    c.sim.control.setFaults({ rateLimitRate: 1, retryAfterSeconds: 3 });
    const r = await c.get('/api/v1/pipelines');
    expect(r.status).toBe(429);
    expect(r.headers.get('retry-after')).toBe('3');
    expect(r.body.error.code).toBe('rate_limited');
    c.sim.control.setFaults({ retryAfterFormat: 'http-date' });
    const d = await c.get('/api/v1/pipelines');
    expect(Date.parse(d.headers.get('retry-after') ?? '')).toBeGreaterThan(Date.now());
    c.sim.control.clearFaults();
    c.sim.control.failNext({ status: 429, retryAfter: '7' });
    expect((await c.get('/api/v1/pipelines')).headers.get('retry-after')).toBe('7');
  });

  it('dropped connections reject the fetch without a response', async () => {
    c.sim.control.failNext({ status: 0, drop: true });
    await expect(c.get('/api/v1/pipelines')).rejects.toThrow();
    c.sim.control.setFaults({ dropRate: 1, paths: ['/api/v1/deals'] });
    await expect(c.get('/api/v1/deals')).rejects.toThrow();
    expect((await c.get('/api/v1/pipelines')).status).toBe(200);
    c.sim.control.clearFaults();
  });

  it('errorRate answers 5xx with the JSON error body; latency slows responses', async () => {
    c.sim.control.setFaults({ errorRate: 1 });
    const r = await c.get('/api/v1/tickets');
    expect([500, 502, 503]).toContain(r.status);
    expect(r.body.error).toEqual({ code: expect.any(String), message: expect.any(String) });
    c.sim.control.setFaults({ errorRate: 0, latencyMs: 150 });
    const t0 = performance.now();
    await c.get('/api/v1/pipelines');
    expect(performance.now() - t0).toBeGreaterThanOrEqual(140);
    c.sim.control.clearFaults();
  });

  it('expired cursors answer 410, by expireCursors() and by cursorTtlMs', async () => {
    const first = await c.get('/api/v1/tickets?limit=2');
    c.sim.control.expireCursors();
    const r = await c.get(`/api/v1/tickets?limit=2&cursor=${encodeURIComponent(first.body.nextCursor)}`);
    expect(r.status).toBe(410);
    expect(r.body.error.code).toBe('cursor_expired');
    c.sim.control.setFaults({ cursorTtlMs: 60_000 });
    const ev = await c.get('/api/v1/events?limit=2');
    expect((await c.get(`/api/v1/events?cursor=${encodeURIComponent(ev.body.nextCursor)}`)).status).toBe(200);
    c.sim.control.advanceClock(60_001);
    expect((await c.get(`/api/v1/events?cursor=${encodeURIComponent(ev.body.nextCursor)}`)).status).toBe(410);
    c.sim.control.clearFaults();
  });

  it('stale reads serve the version before the last write', async () => {
    const id = (c.sim.control.truth().tickets[0] as Wire).id as string;
    await c.send('PATCH', `/api/v1/tickets/${id}`, { summary: 'v1' });
    await c.send('PATCH', `/api/v1/tickets/${id}`, { summary: 'v2' });
    c.sim.control.setFaults({ staleReadRate: 1 });
    expect((await c.get(`/api/v1/tickets/${id}`)).body.ticket.summary).toBe('v1');
    c.sim.control.clearFaults();
    expect((await c.get(`/api/v1/tickets/${id}`)).body.ticket.summary).toBe('v2');
  });

  it('corrupt serves a schema-invalid record with an update event; repair restores it', async () => {
    const deal = (c.sim.control.truth().deals[0] as Wire).id as string;
    const ticket = (c.sim.control.truth().tickets[1] as Wire).id as string;
    c.sim.control.corrupt('deal', deal, 'bad-timestamp');
    c.sim.control.corrupt('ticket', ticket, 'missing-field');
    expect((await c.get(`/api/v1/deals/${deal}`)).body.deal.createdAt).toBe('not-a-date');
    const listed = (await c.get('/api/v1/tickets?limit=5')).body.tickets.find((t: Wire) => t.id === ticket);
    expect(listed).toBeDefined();
    expect('status' in listed).toBe(false);
    const events = (await c.get('/api/v1/events?limit=2')).body.events;
    expect(events.map((e: Wire) => `${e.type}:${e.entityId}`)).toEqual([`ticket.updated:${ticket}`, `deal.updated:${deal}`]);
    c.sim.control.repair('deal', deal);
    expect(Date.parse((await c.get(`/api/v1/deals/${deal}`)).body.deal.createdAt)).not.toBeNaN();
    c.sim.control.corrupt('ticket', ticket, 'wrong-type');
    expect(typeof (await c.get(`/api/v1/tickets/${ticket}`)).body.ticket.number).toBe('string');
  });

  it('the Date header is the simulated clock to the second; dateHeader and dateSkewMs send none, junk or a wrong clock', async () => {
    const date = async (path = '/api/v1/events?limit=1') => (await c.get(path)).headers.get('date');
    /** The simulated clock, floored to the second as an HTTP date is. */
    const second = (skewMs = 0) => new Date(Math.floor((c.sim.control.now().getTime() + skewMs) / 1000) * 1000).toUTCString();
    c.sim.control.advanceClock(3_600_000); // an hour ahead of the host's clock, which the header does not follow
    // Read the clock on both sides: the answer may fall on the next second.
    const expectClock = async (skewMs = 0, path?: string) => {
      const before = second(skewMs);
      const got = await date(path);
      expect([before, second(skewMs)]).toContain(got);
    };
    await expectClock();
    await expectClock(0, '/api/v1/nope'); // errors carry it too
    c.sim.control.setFaults({ dateHeader: 'none' });
    expect(await date()).toBeNull();
    c.sim.control.setFaults({ dateHeader: 'invalid' });
    expect(await date()).toBe('not a date');
    c.sim.control.setFaults({ dateHeader: 'clock', dateSkewMs: -86_400_000 });
    await expectClock(-86_400_000);
    c.sim.control.setFaults({ dateSkewMs: 90_000, paths: ['/api/v1/pipelines'] });
    await expectClock(90_000, '/api/v1/pipelines');
    await expectClock(0, '/api/v1/events?limit=1');
    expect(() => c.sim.control.setFaults({ dateHeader: 'later' as 'none' })).toThrow(/dateHeader/);
    expect(() => c.sim.control.setFaults({ dateSkewMs: Number.NaN })).toThrow(/dateSkewMs/);
    c.sim.control.clearFaults();
    await expectClock();
  });

  it('the request log records API requests (not control requests)', async () => {
    c.sim.control.clearRequests();
    await c.get('/api/v1/tickets?limit=3&status=open');
    await fetch(`${c.sim.url}/_control/truth`);
    const log = c.sim.control.requests();
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({
      method: 'GET',
      path: '/api/v1/tickets',
      query: { limit: '3', status: 'open' },
      status: 200,
      authorized: true,
    });
  });
});

describe('HTTP control surface', () => {
  const ctl = (path: string, method = 'GET', body?: object) =>
    fetch(`${c.sim.url}/_control${path}`, { method, headers: { 'content-type': 'application/json' }, body: body && JSON.stringify(body) });

  it('maps onto the control handle', async () => {
    expect(((await (await ctl('/truth')).json()) as Wire).tickets.length).toBeGreaterThan(0);
    expect((await ctl('/fail-next', 'POST', { status: 500 })).status).toBe(200);
    expect((await c.get('/api/v1/pipelines')).status).toBe(500);
    const before = c.sim.control.now().getTime();
    await ctl('/clock', 'POST', { advanceMs: 3_600_000 });
    expect(c.sim.control.now().getTime() - before).toBeGreaterThanOrEqual(3_600_000);
    const acted = (await (await ctl('/act', 'POST', { count: 3 })).json()) as Wire;
    expect(acted.activity).toHaveLength(3);
    // Each write names the updatedAt the API then serves for its record (the bench's freshness
    // compares the mirror with it): one write at a time, so no later write moves it on.
    for (let i = 0; i < 30; i++) {
      const [w] = ((await (await ctl('/act', 'POST', { count: 1 })).json()) as Wire).activity as Wire[];
      if (w.kind === 'delete_deal') continue;
      const served = await c.get(`/api/v1/${w.entityType}s/${w.entityId}`);
      expect(served.status).toBe(200);
      expect(Date.parse(served.body[w.entityType].updatedAt), w.kind).toBe(Date.parse(w.updatedAt));
    }
    const injected = (await (await ctl('/events', 'POST', { type: 'doc.published', entityType: 'doc', entityId: 'doc_1' })).json()) as Wire;
    expect((await c.get('/api/v1/events?limit=1')).body.events[0].id).toBe(injected.id);
    const id = (c.sim.control.truth().tickets[0] as Wire).id;
    expect((await ctl(`/tickets/${id}/hide`, 'POST', { reason: 'spam' })).status).toBe(200);
    expect((await c.get(`/api/v1/tickets/${id}`)).status).toBe(404);
    expect((await ctl('/tickets/tkt_nope/hide', 'POST', { reason: 'spam' })).status).toBe(404);
    await ctl('/faults', 'POST', { rateLimitRate: 1 });
    expect((await c.get('/api/v1/pipelines')).status).toBe(429);
    await ctl('/faults', 'DELETE');
    expect((await c.get('/api/v1/pipelines')).status).toBe(200);
    expect(((await (await ctl('/requests')).json()) as Wire).requests.length).toBeGreaterThan(0);
  });

  it('is off unless asked for', async () => {
    const other = await start({ tickets: 1, deals: 1 });
    try {
      expect((await fetch(`${other.sim.url}/_control/truth`)).status).toBe(404);
    } finally {
      await other.sim.close();
    }
  });
});
