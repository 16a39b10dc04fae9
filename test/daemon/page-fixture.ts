import { CycleLog, cycleRows, describeState, type PageSnapshot, type StateFacts, type StatusReport } from '../../src/daemon/index.js';

export const T0 = Date.parse('2026-03-01T12:00:00.000Z');

/** Facts of an idle writer; tests override what they need. */
export function facts(over: Partial<StateFacts> = {}): StateFacts {
  return {
    now: T0,
    role: 'writer',
    runningSince: null,
    backfill: null,
    rateLimited: null,
    failures: null,
    problem: null,
    lastSuccessAt: '2026-03-01T11:59:58.000Z',
    lagSeconds: 2,
    ...over,
  };
}

/** A mirror's side of the status with `quarantined` rows and runs from before the process started. */
export function mirrorPart(over: Partial<Omit<StatusReport, 'live'>> = {}): Omit<StatusReport, 'live'> {
  return {
    database: '/data/mirror.sqlite',
    backfill: { phase: 'done', copied: { deals: 10, tickets: 50, events: 0 }, estimate: {} },
    watermark: '2026-03-01T11:59:57.000Z',
    windowInProgress: false,
    upstream: null,
    lateEvent: null,
    deferredIndexes: [],
    lastCycle: { at: '2026-03-01T11:59:58.000Z', head: '2026-03-01T11:59:59.000Z', watermark: '2026-03-01T11:59:57.000Z', lagSeconds: 2 },
    currentAsOf: null,
    lastRun: null,
    recentRuns: [
      {
        id: 1,
        kind: 'backfill',
        started_at: '2026-03-01T10:00:00.000Z',
        finished_at: '2026-03-01T10:01:00.000Z',
        outcome: 'success',
        events_read: 5,
        events_new: 5,
        records_fetched: 60,
        requests: 70,
        retries: 0,
        error: null,
        cycles: 1,
      },
    ],
    lastVerify: null,
    lastSuccessAt: '2026-03-01T11:59:58.000Z',
    dirty: 3,
    storage: { databaseBytes: 5 * 1024 * 1024, walBytes: 1024 * 1024 },
    events: { oldest: null, retentionDays: 90 },
    quarantined: [],
    quarantinedByType: {},
    ...over,
  };
}

/** A cycle log on a clock the test moves, with `n` finished cycles of one minute each. */
export function cycleLog(n: number, failEvery = 0): { log: CycleLog; now: () => number } {
  let now = T0 - n * 60_000;
  const log = new CycleLog(() => now);
  for (let i = 0; i < n; i++) {
    log.begin('sync');
    log.request({ status: 200, attempt: 1 });
    if (i % 3 === 0) log.request({ status: 429, attempt: 1 });
    log.record('fresh');
    if (i % 2 === 0) log.record('stale');
    now += 1_000;
    const failed = failEvery > 0 && i % failEvery === failEvery - 1;
    log.end({ outcome: failed ? 'failed' : 'success', error: failed ? 'upstream 503' : null, lagSeconds: failed ? null : i });
    now += 59_000;
  }
  return { log, now: () => now };
}

/** A whole snapshot: the state from `f`, the charts and cycles from `log`. */
export function snapshot(f: StateFacts, log: CycleLog, mirror: Omit<StatusReport, 'live'> | null = mirrorPart()): PageSnapshot {
  const live: StatusReport['live'] = {
    source: 'daemon',
    state: describeState(f),
    role: f.role,
    version: '9.9.9',
    startedAt: new Date(log.startedAt).toISOString(),
    uptimeSeconds: Math.round((f.now - log.startedAt) / 1000),
    freshness: { lagSeconds: f.lagSeconds, lastSuccessAt: f.lastSuccessAt, watermark: mirror?.watermark ?? null },
    cycles: log.recent(20),
    charts: log.chartData(),
    requestCeilingPerMinute: 600,
    verify: null,
  };
  return { generatedAt: new Date(f.now).toISOString(), live, mirror, mirrorError: null, cycles: cycleRows(live, mirror) };
}
