import { describe, expect, it } from 'vitest';
import { HealthTracker, tickInterval } from '../../src/daemon/index.js';
import { endpointOf } from '../../src/daemon/index.js';

/** A tracker on a clock the test moves: every state the endpoints can report, without waiting. */
function tracker(schedule = '*/10 * * * * *', stallMs = 60_000) {
  let now = Date.parse('2026-01-01T00:00:00.000Z');
  const h = new HealthTracker(schedule, stallMs, () => now);
  return { h, advance: (ms: number) => (now += ms) };
}

describe('health and readiness verdicts', () => {
  it('a standby is live and ready (it can take over at once)', () => {
    const { h } = tracker();
    expect(h.liveness()).toMatchObject({ ok: true, body: { status: 'ok', role: 'standby' } });
    expect(h.readiness()).toMatchObject({ ok: true, body: { status: 'standby' } });
  });

  it('a writer is ready while its last success is within three ticks, then not', () => {
    const { h, advance } = tracker();
    h.state.role = 'writer';
    expect(h.readiness()).toMatchObject({ ok: false, body: { reason: 'no cycle has succeeded yet' } });
    h.cycleStarted();
    h.cycleEnded({ ok: true });
    expect(h.readiness()).toMatchObject({ ok: true, body: { status: 'ready' } });
    advance(30_000);
    expect(h.readiness().ok).toBe(true);
    advance(1);
    expect(h.readiness()).toMatchObject({ ok: false, body: { status: 'not ready' } });
    expect(String(h.readiness().body.reason)).toMatch(/three schedule ticks \(30 s\)/);
    expect(h.liveness().ok).toBe(true);
  });

  it('backfilling is not ready, with its progress in the body', () => {
    const { h } = tracker();
    h.state.role = 'writer';
    h.cycleStarted();
    h.state.backfill = { phase: 'tickets', copied: { deals: 20, tickets: 300, events: 0 }, estimate: { deals: 20 } };
    const r = h.readiness();
    expect(r.ok).toBe(false);
    expect(r.body).toMatchObject({
      reason: 'backfilling',
      progress: { phase: 'tickets', copied: { tickets: 300 }, estimate: { deals: 20 } },
    });
    expect(h.liveness().ok).toBe(true);
  });

  it('failing cycles make the writer not ready but stay live (a restart would not help)', () => {
    const { h, advance } = tracker();
    h.state.role = 'writer';
    h.cycleStarted();
    h.cycleEnded({ ok: true });
    for (let i = 0; i < 4; i++) {
      advance(10_000);
      h.cycleStarted();
      h.cycleEnded({ ok: false, error: 'upstream unavailable' });
    }
    const r = h.readiness();
    expect(r.ok).toBe(false);
    expect(r.body).toMatchObject({ consecutiveFailures: 4, lastError: 'upstream unavailable' });
    expect(String(r.body.reason)).toMatch(/the cycles fail: upstream unavailable/);
    expect(h.liveness().ok).toBe(true);
  });

  it('a cycle without progress beyond the bound fails liveness; progress resets the clock', () => {
    const { h, advance } = tracker('*/10 * * * * *', 60_000);
    h.state.role = 'writer';
    h.cycleStarted();
    advance(50_000);
    h.progress();
    advance(59_000);
    expect(h.liveness().ok).toBe(true);
    advance(2_000);
    const live = h.liveness();
    expect(live.ok).toBe(false);
    expect(String(live.body.reason)).toMatch(/no progress for 61 s \(bound 60 s\)/);
    expect(h.readiness().ok).toBe(false);
    h.cycleEnded({ ok: true });
    expect(h.liveness().ok).toBe(true);
  });

  it('three cycles in a row that could not move fail liveness; an upstream error between them, or a success, resets the count', () => {
    const { h, advance } = tracker();
    h.state.role = 'writer';
    const fail = (code: string) => {
      advance(10_000);
      h.cycleStarted();
      h.cycleEnded({ ok: false, error: `${code} happened`, code });
    };
    fail('PAGING_RUNAWAY');
    fail('CYCLE_STALLED');
    fail('UPSTREAM_UNAVAILABLE');
    fail('PAGING_RUNAWAY');
    fail('PAGING_RUNAWAY');
    expect(h.liveness().ok).toBe(true);
    fail('CYCLE_STALLED');
    const live = h.liveness();
    expect(live).toMatchObject({ ok: false, body: { status: 'unhealthy', consecutiveStuck: 3 } });
    expect(String(live.body.reason)).toMatch(/last 3 cycles made no progress.*CYCLE_STALLED happened/);
    h.cycleStarted();
    h.cycleEnded({ ok: true });
    expect(h.liveness().ok).toBe(true);
  });

  it('a lost writer lock fails liveness', () => {
    const { h } = tracker();
    h.state.role = 'writer';
    h.state.lockLost = true;
    expect(h.liveness()).toMatchObject({ ok: false, body: { status: 'unhealthy' } });
    expect(String(h.liveness().body.reason)).toMatch(/writer lock was lost/);
  });

  it('stopping is live but not ready', () => {
    const { h } = tracker();
    h.state.role = 'stopping';
    expect(h.liveness().ok).toBe(true);
    expect(h.readiness()).toMatchObject({ ok: false, body: { reason: 'stopping' } });
  });

  it('reads the tick from the schedule and names endpoints without ids', () => {
    expect(tickInterval('*/30 * * * * *')).toBe(30_000);
    expect(tickInterval('0 */5 * * * *')).toBe(300_000);
    expect(endpointOf('/api/v1/tickets?limit=100&cursor=abc')).toBe('tickets');
    expect(endpointOf('/api/v1/tickets/t_1/messages?limit=100')).toBe('tickets/:id/messages');
    expect(endpointOf('/prefix/api/v1/deals/d_9')).toBe('deals/:id');
  });
});
