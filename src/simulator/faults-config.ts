import type { FaultConfig } from './types.js';

export function defaultFaults(): FaultConfig {
  return {
    latencyMs: 0,
    errorRate: 0,
    rateLimitRate: 0,
    retryAfterSeconds: 1,
    retryAfterFormat: 'seconds',
    dropRate: 0,
    staleReadRate: 0,
    lateEventRate: 0,
    lateEventDelayMs: 5000,
    cursorTtlMs: 0,
    paths: [],
    rateLimitPerSecond: 0,
    rateLimitBurst: 0,
    rateLimitHeaders: 'all',
    dateHeader: 'clock',
    dateSkewMs: 0,
    eventPageOrder: 'newest-first',
    removeServedAtPage: 0,
    removeServedCount: 3,
  };
}

/** Merges known keys only, so a typo in a control request cannot plant junk in the config. */
export function mergeFaults(target: FaultConfig, patch: Partial<FaultConfig>): void {
  const defaults = defaultFaults();
  for (const key of Object.keys(defaults) as (keyof FaultConfig)[]) {
    const value = patch[key];
    if (value === undefined) continue;
    if (key === 'paths') {
      if (!Array.isArray(value)) throw new TypeError('faults.paths must be an array of path prefixes');
      target.paths = value.map(String);
    } else if (key === 'retryAfterFormat') {
      if (value !== 'seconds' && value !== 'http-date') throw new TypeError("faults.retryAfterFormat must be 'seconds' or 'http-date'");
      target.retryAfterFormat = value;
    } else if (key === 'rateLimitHeaders') {
      if (value !== 'all' && value !== 'no-policy' && value !== 'none')
        throw new TypeError("faults.rateLimitHeaders must be 'all', 'no-policy' or 'none'");
      target.rateLimitHeaders = value;
    } else if (key === 'dateHeader') {
      if (value !== 'clock' && value !== 'none' && value !== 'invalid')
        throw new TypeError("faults.dateHeader must be 'clock', 'none' or 'invalid'");
      target.dateHeader = value;
    } else if (key === 'eventPageOrder') {
      if (value !== 'newest-first' && value !== 'oldest-first')
        throw new TypeError("faults.eventPageOrder must be 'newest-first' or 'oldest-first'");
      target.eventPageOrder = value;
    } else if (key === 'dateSkewMs') {
      // The one number that may be negative: a Date header behind the clock.
      if (typeof value !== 'number' || !Number.isFinite(value)) throw new TypeError('faults.dateSkewMs must be a finite number');
      target.dateSkewMs = value;
    } else {
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
        throw new TypeError(`faults.${key} must be a non-negative number`);
      (target as unknown as Record<string, number>)[key] = value;
    }
  }
}
