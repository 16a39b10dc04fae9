import { afterEach, describe, expect, it } from 'vitest';
import { fromDbTimestamp, parseTimestamp, toDbTimestamp, toIsoTimestamp } from '../../src/util/time.js';

/** The stored form has no zone; it must mean UTC whatever the process's zone is. */
describe('the stored timestamp form under a non-UTC process time zone', () => {
  const saved = process.env.TZ;
  afterEach(() => {
    if (saved === undefined) delete process.env.TZ;
    else process.env.TZ = saved;
  });

  it('is read as UTC and converts both ways exactly', () => {
    process.env.TZ = 'America/New_York';
    expect(new Date(2024, 4, 1).getTimezoneOffset()).not.toBe(0); // the zone change took effect
    const stored = '2024-05-01 09:00:00.125';
    expect(parseTimestamp(stored)).toBe(Date.UTC(2024, 4, 1, 9, 0, 0, 125));
    expect(fromDbTimestamp(stored)).toBe('2024-05-01T09:00:00.125Z');
    expect(toIsoTimestamp(stored)).toBe('2024-05-01T09:00:00.125Z');
    expect(toDbTimestamp('2024-05-01T05:00:00.125-04:00')).toBe(stored);
    expect(toDbTimestamp(stored)).toBe(stored);
    expect(toDbTimestamp(new Date(Date.UTC(2024, 4, 1, 9, 0, 0, 125)))).toBe(stored);
    expect(() => toDbTimestamp('yesterday')).toThrow();
  });
});
