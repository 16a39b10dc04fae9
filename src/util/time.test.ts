import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { canonicalInstant, isCalendarDate, readInstant, toDbTimestamp, toIsoTimestamp } from './time.js';

/** An instant computed without Date.parse, so the test does not share the rollover it checks. */
const utc = (y: number, mo: number, d: number, h = 0, mi = 0, s = 0, ms = 0) => Date.UTC(y, mo - 1, d, h, mi, s, ms);

describe('readInstant: only real calendar instants', () => {
  it.each([
    ['2026-11-30T12:00:00Z', utc(2026, 11, 30, 12)],
    ['2026-11-30T12:00:00.5Z', utc(2026, 11, 30, 12, 0, 0, 500)],
    ['2026-11-30T12:00:00.123456789Z', utc(2026, 11, 30, 12, 0, 0, 123)],
    ['2026-11-30T12:00:00,25Z', utc(2026, 11, 30, 12, 0, 0, 250)],
    ['2026-11-30T12:00Z', utc(2026, 11, 30, 12)],
    ['2026-11-30T12:00:00+00:00', utc(2026, 11, 30, 12)],
    ['2026-11-30T12:00:00-00:00', utc(2026, 11, 30, 12)],
    ['2026-11-30T14:30:00+02:30', utc(2026, 11, 30, 12)],
    ['2026-11-30T07:00:00-0500', utc(2026, 11, 30, 12)],
    ['2026-11-30T13:00:00+01', utc(2026, 11, 30, 12)],
    ['2026-11-30t12:00:00z', utc(2026, 11, 30, 12)],
    ['2024-02-29T00:00:00Z', utc(2024, 2, 29)],
    ['2000-02-29T23:59:59.999Z', utc(2000, 2, 29, 23, 59, 59, 999)],
    ['2026-12-31T23:59:59Z', utc(2026, 12, 31, 23, 59, 59)],
    ['2026-11-30', utc(2026, 11, 30)],
  ])('accepts %s', (text, ms) => {
    expect(readInstant(text)).toEqual({ ok: true, ms });
  });

  it.each([
    ['2026-11-31T12:00:00Z', /day 31 does not exist in 2026-11/],
    ['2026-02-29T12:00:00Z', /day 29 does not exist in 2026-02/],
    ['1900-02-29T12:00:00Z', /day 29 does not exist/],
    ['2026-04-31T00:00:00Z', /day 31/],
    ['2026-01-00T00:00:00Z', /day 00/],
    ['2026-13-01T00:00:00Z', /month 13/],
    ['2026-00-10T00:00:00Z', /month 00/],
    ['2026-01-01T24:00:00Z', /hour 24/],
    ['2026-01-01T23:60:00Z', /minute 60/],
    ['2026-01-01T23:59:60Z', /second 60/],
    ['2026-01-01T12:00:00+24:00', /offset/],
    ['2026-01-01T12:00:00+01:60', /offset/],
    ['2026-01-01T12:00:00', /no zone/],
    ['2026-01-01 12:00:00Z', /not an ISO 8601/],
    ['yesterday', /not an ISO 8601/],
    ['2026-1-1T12:00:00Z', /not an ISO 8601/],
  ])('refuses %s', (text, why) => {
    const r = readInstant(text);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.why).toMatch(why);
  });

  it('calendar dates', () => {
    expect(['2024-02-29', '2026-12-31', '0001-01-01'].map(isCalendarDate)).toEqual([true, true, true]);
    expect(['2026-02-29', '2026-11-31', '2026-13-01', '2026-11-30T00:00:00Z', '26-11-30'].map(isCalendarDate)).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
  });
});

describe('the stored forms never roll over', () => {
  it('converts every legitimate form to the one stored form', () => {
    expect(toDbTimestamp('2026-11-30T12:00:00Z')).toBe('2026-11-30 12:00:00.000');
    expect(toDbTimestamp('2026-11-30T12:00:00.123456Z')).toBe('2026-11-30 12:00:00.123');
    expect(toDbTimestamp('2026-12-01T01:00:00+13:00')).toBe('2026-11-30 12:00:00.000');
    expect(toIsoTimestamp('2026-11-30 12:00:00.000')).toBe('2026-11-30T12:00:00.000Z');
  });

  it('throws on an impossible instant instead of storing the next day', () => {
    expect(() => toDbTimestamp('2026-11-31T12:00:00Z')).toThrow(/day 31 does not exist/);
    expect(() => toIsoTimestamp('2026-01-01T24:00:00Z')).toThrow(/hour 24/);
    expect(() => toDbTimestamp('2026-11-31 12:00:00.000')).toThrow(/day 31/);
    expect(() => toIsoTimestamp('9999-12-31T23:59:59-05:00')).toThrow(/out of range/);
  });
});

describe('canonicalInstant: the fast reading of the canonical form', () => {
  it('reads every instant of years 0-9999 as toISOString wrote it', () => {
    fc.assert(
      fc.property(fc.integer({ min: -62167219200000, max: Date.UTC(9999, 11, 31, 23, 59, 59, 999) }), (ms) => {
        const text = new Date(ms).toISOString();
        fc.pre(text.length === 24);
        expect(canonicalInstant(text)).toBe(ms);
        expect(readInstant(text)).toEqual({ ok: true, ms });
      }),
      { numRuns: 2000 },
    );
  });

  it.each([
    '2026-11-31T12:00:00.000Z',
    '2025-02-29T00:00:00.000Z',
    '2026-13-01T00:00:00.000Z',
    '2026-11-30T24:00:00.000Z',
    '2026-11-30T12:60:00.000Z',
    '2026-11-30T12:00:60.000Z',
    '2026-11-30T12:00:00.000z',
    '2026-11-30t12:00:00.000Z',
    '2026-11-30T12:00:00.00AZ',
    '+02026-11-30T12:00:00.000Z',
    '2026-11-30T12:00:00.000+00:00',
  ])('leaves %s to the general reading', (text) => {
    expect(canonicalInstant(text)).toBeNull();
    const general = readInstant(text);
    // The general reading still refuses the impossible ones, and reads the other spellings.
    if (general.ok) expect(general.ms).toBe(Date.parse(text));
  });
});
