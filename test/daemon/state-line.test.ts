import { describe, expect, it } from 'vitest';
import { CycleLog, describeState, mirrorFacts } from '../../src/daemon/index.js';
import { facts, mirrorPart, T0 } from './page-fixture.js';

describe('the state line', () => {
  it('says what the keeper does, first what matters most', () => {
    const running = '2026-03-01T11:59:50.000Z';
    expect(describeState(facts()).line).toBe('Idle: the last cycle succeeded at 11:59:58 UTC; lag 2 s.');
    expect(describeState(facts({ runningSince: running, lagSeconds: null })).line).toBe(
      'Syncing: a cycle is running since 11:59:50 UTC; lag unknown after the last one.',
    );
    // A failure outranks a running cycle; a stopping process outranks everything.
    const failing = facts({ runningSince: running, failures: { consecutive: 3, lastError: 'Upstream unavailable after 6 attempts' } });
    expect(describeState(failing).line).toBe('Failing: the last 3 cycles failed (retrying now): Upstream unavailable after 6 attempts.');
    expect(describeState({ ...failing, role: 'stopping' }).kind).toBe('stopping');
    expect(describeState(facts({ problem: 'the running cycle has made no progress for 700 s (bound 600 s)' })).line).toBe(
      'Failing: the running cycle has made no progress for 700 s (bound 600 s).',
    );
    // A 429 matters only while a cycle waits on it.
    const limited = { since: '2026-03-01T11:59:59.000Z', until: '2026-03-01T12:00:59.000Z' };
    expect(describeState(facts({ rateLimited: limited })).kind).toBe('idle');
    expect(describeState(facts({ rateLimited: limited, runningSince: running })).kind).toBe('rate-limited');
    expect(describeState(facts({ role: null, lastSuccessAt: null })).line).toBe('No cycle has finished yet.');
  });

  it('gives the backfill per list, the estimate where one exists, and an ETA at the measured rate', () => {
    const backfill = {
      phase: 'deals',
      copied: { deals: 400, tickets: 0, events: 0 },
      estimate: { deals: 1000 },
      ratePerSecond: { deals: 50 },
    };
    expect(describeState(facts({ backfill })).line).toBe(
      'Backfilling (phase deals): 400 of ~1,000 deals, 0 tickets, 0 events copied; deals done in about 12 s at 50/s.',
    );
    expect(describeState(facts({ backfill: { ...backfill, ratePerSecond: {} } })).line).toMatch(/; deals: no rate measured yet\.$/);
    const later = { ...backfill, phase: 'tickets', copied: { deals: 1000, tickets: 12_345, events: 0 } };
    expect(describeState(facts({ backfill: later })).line).toBe(
      'Backfilling (phase tickets): 1,000 of ~1,000 deals, 12,345 tickets, 0 events copied.',
    );
  });

  it('reads the same line from the mirror when no daemon answers: running and failed runs, the backfill', () => {
    const run = mirrorPart().recentRuns[0]!;
    const failed = { ...run, kind: 'sync', outcome: 'failed', error: 'UPSTREAM_UNAVAILABLE: Upstream unavailable' };
    const running = { ...run, kind: 'sync', outcome: 'running', finished_at: null, started_at: '2026-03-01T11:59:59.000Z' };
    const m = mirrorPart({ recentRuns: [running, failed, failed, run] });
    expect(describeState(mirrorFacts(m, T0)).line).toBe(
      'Failing: the last 2 cycles failed (retrying now): UPSTREAM_UNAVAILABLE: Upstream unavailable.',
    );
    const backfilling = mirrorPart({
      recentRuns: [{ ...running, kind: 'backfill' }],
      backfill: { phase: 'tickets', copied: { deals: 10, tickets: 40, events: 0 }, estimate: { deals: 10 } },
    });
    expect(describeState(mirrorFacts(backfilling, T0))).toEqual({
      kind: 'backfilling',
      line: 'Backfilling (phase tickets): 10 of ~10 deals, 40 tickets, 0 events copied.',
    });
  });
});

describe('the cycle log', () => {
  it('keeps the last cycles one by one, then buckets, and request slots for 24 hours only', () => {
    let now = T0;
    const log = new CycleLog(() => now);
    for (let i = 0; i < 200; i++) {
      log.begin('sync');
      log.request({ status: i % 10 === 0 ? 429 : 200, attempt: 1 });
      log.record('fresh');
      now += 10_000;
      log.end({ outcome: 'success', error: null, lagSeconds: i });
    }
    expect(log.recent(20)).toHaveLength(20);
    expect(log.recent(20)[0]!.lagSeconds).toBe(199);
    const data = log.chartData();
    // 200 cycles are more than the log keeps one by one: ten-minute buckets of 60 cycles each, their largest lag.
    expect(data.cycleBucketSeconds).toBe(600);
    expect(data.cycles.map((c) => c.cycles)).toEqual([60, 60, 60, 20]);
    expect(data.cycles[0]!.lagSeconds).toBe(59);
    expect(data.requests.reduce((n, r) => n + r.rateLimited, 0)).toBe(20);
    // Six requests per minute in every bucket, whatever its width.
    expect(data.requestBucketSeconds).toBe(20);
    expect(new Set(data.requests.slice(0, -1).map((r) => r.perMinute))).toEqual(new Set([6]));
    now += 86_400_000;
    const day = log.chartData();
    expect(day.requests.reduce((n, r) => n + r.perMinute, 0)).toBe(0);
    expect(day.cycles).toEqual([]);
  });

  it('draws one point per cycle while it holds every cycle of the window', () => {
    let now = T0;
    const log = new CycleLog(() => now);
    for (let i = 0; i < 5; i++) {
      log.begin(i === 0 ? 'sync' : 'reconcile');
      if (i === 0) log.copied(100);
      now += 1000;
      log.end({ outcome: i === 3 ? 'failed' : 'success', error: i === 3 ? 'boom' : null, lagSeconds: i === 3 ? null : 1 });
    }
    const data = log.chartData();
    expect(data.cycleBucketSeconds).toBeNull();
    expect(data.cycles.map((c) => c.failed)).toEqual([0, 0, 0, 1, 0]);
    expect(log.recent(5).map((c) => c.kind)).toEqual(['reconcile', 'reconcile', 'reconcile', 'reconcile', 'backfill']);
  });
});
