import { describe, expect, it } from 'vitest';
import type { LookbackState } from './state.js';
import {
  LATE_EVENT_HOLD_SECONDS,
  lateLately,
  newestFirst,
  planWindow,
  reachedBelow,
  READ_FLOOR_AHEAD_MS,
  READ_FLOOR_BEHIND_MS,
  tickSince,
  trustedReadFloor,
} from './window.js';

const T0 = Date.parse('2026-01-01T12:00:00.000Z');
/** An upstream or local time `s` seconds after T0. */
const at = (s: number) => new Date(T0 + s * 1000).toISOString();
const config = { lookbackSeconds: 300, tickOverlapSeconds: 5, fullLookbackEverySeconds: 1800 };
/** A full window ran 60 s ago: the next one is not due, so a plan is a tick. */
const recentFull: LookbackState = { lastFullAt: at(-60), anchor: at(-100) };

describe('tickSince, the start of a tick window', () => {
  it('is the plain overlap without both floors', () => {
    expect(tickSince(at(0), 5, { previous: null, current: null })).toBe(at(-5));
    expect(tickSince(at(0), 5, { previous: at(30), current: null })).toBe(at(-5));
    expect(tickSince(at(0), 5, { previous: null, current: at(35) })).toBe(at(-5));
  });

  it('busy (the previous window read right after the newest event): the plain overlap', () => {
    expect(tickSince(at(0), 5, { previous: at(0), current: at(5) })).toBe(at(-5));
    // A floor before the watermark (an event stamped after the Date's whole second) changes nothing.
    expect(tickSince(at(0.7), 5, { previous: at(0), current: at(5) })).toBe(at(-4.3));
  });

  it('idle (the previous window read more than the overlap after the watermark): the watermark itself', () => {
    expect(tickSince(at(0), 5, { previous: at(5), current: at(10) })).toBe(at(0));
    expect(tickSince(at(0), 5, { previous: at(3_600), current: at(3_605) })).toBe(at(0));
  });

  it('in between: floor − overlap, which still reaches every event the previous window could have missed', () => {
    expect(tickSince(at(0), 5, { previous: at(2), current: at(7) })).toBe(at(-3));
    expect(tickSince(at(0), 5, { previous: at(4.999), current: at(10) })).toBe(at(-0.001));
  });

  it('the upstream clock went back since the previous window: the plain overlap', () => {
    expect(tickSince(at(0), 5, { previous: at(20), current: at(19) })).toBe(at(-5));
    // Equal floors (two answers within one second) are not a step back.
    expect(tickSince(at(0), 5, { previous: at(20), current: at(20) })).toBe(at(0));
  });

  it('an overlap of 0 always starts at the watermark', () => {
    expect(tickSince(at(0), 0, { previous: at(20), current: at(25) })).toBe(at(0));
    expect(tickSince(at(0), 0, { previous: null, current: null })).toBe(at(0));
  });
});

describe('planWindow', () => {
  const idle = { previous: at(30), current: at(35) };

  it('a tick uses the floors and carries this cycle’s floor', () => {
    expect(planWindow(at(0), recentFull, config, at(35), idle)).toEqual({
      since: at(0),
      cursor: null,
      maxOccurredAt: at(0),
      readFloor: at(35),
      lateBefore: at(-1),
    });
    expect(planWindow(at(0), recentFull, config, at(35))).toMatchObject({ since: at(-5), readFloor: null });
  });

  it('a busy tick may end at its guaranteed overlap (tickOverlapMinSeconds, default 1 s)', () => {
    const busy = { previous: at(0), current: at(5) };
    expect(planWindow(at(0), recentFull, config, at(5), busy)).toMatchObject({ since: at(-5), reach: at(-1), lateBefore: at(-1) });
    expect(planWindow(at(0), recentFull, { ...config, tickOverlapMinSeconds: 3 }, at(5), busy)).toMatchObject({ reach: at(-3) });
    // The guaranteed part is the whole overlap: nothing to cut.
    expect(planWindow(at(0), recentFull, { ...config, tickOverlapMinSeconds: 5 }, at(5), busy)).not.toHaveProperty('reach');
    // More than the overlap counts as the overlap.
    expect(planWindow(at(0), recentFull, { ...config, tickOverlapMinSeconds: 9 }, at(5), busy)).toMatchObject({
      since: at(-5),
      lateBefore: at(-5),
    });
    expect(planWindow(at(0), recentFull, { ...config, tickOverlapMinSeconds: 9 }, at(5), busy)).not.toHaveProperty('reach');
    // In between busy and idle: the floor already starts the tick after the guaranteed part.
    expect(planWindow(at(0), recentFull, config, at(10), { previous: at(4.5), current: at(10) })).not.toHaveProperty('reach');
  });

  it('a late event seen within the last hour makes ticks read the whole overlap', () => {
    const busy = { previous: at(0), current: at(5) };
    expect(planWindow(at(0), recentFull, config, at(5), busy, at(-3_000))).not.toHaveProperty('reach');
    expect(planWindow(at(0), recentFull, config, at(5), busy, at(5 - LATE_EVENT_HOLD_SECONDS))).toMatchObject({ reach: at(-1) });
  });

  it('a full window ignores the floors for its start and still carries this cycle’s floor', () => {
    const full = planWindow(at(0), null, config, at(35), idle);
    expect(full).toEqual({
      since: at(-300),
      cursor: null,
      maxOccurredAt: at(0),
      readFloor: at(35),
      full: { startedAt: at(35), watermark: at(0) },
      lateBefore: at(-1),
    });
    const due = { lastFullAt: at(-1_800), anchor: at(-100) };
    expect(planWindow(at(0), due, config, at(35), idle)).toMatchObject({ since: at(-400), readFloor: at(35) });
  });

  it('a mirror without a watermark reads the whole log, floor carried', () => {
    expect(planWindow(null, null, config, at(35), idle)).toMatchObject({ since: null, readFloor: at(35), full: { watermark: null } });
  });
});

describe('trustedReadFloor', () => {
  it('takes a Date close to the local clock, as the sync’s ISO form', () => {
    expect(trustedReadFloor('Thu, 01 Jan 2026 12:00:00 GMT', at(0.9))).toBe(at(0));
    expect(trustedReadFloor(at(0), at(0))).toBe(at(0));
  });

  it('refuses no Date, a Date that is not one, and one too far from the local clock', () => {
    expect(trustedReadFloor(null, at(0))).toBeNull();
    expect(trustedReadFloor(undefined, at(0))).toBeNull();
    expect(trustedReadFloor('not a date', at(0))).toBeNull();
    const ahead = READ_FLOOR_AHEAD_MS / 1000;
    const behind = READ_FLOOR_BEHIND_MS / 1000;
    expect(trustedReadFloor(at(ahead), at(0))).toBe(at(ahead));
    expect(trustedReadFloor(at(ahead + 0.001), at(0))).toBeNull();
    expect(trustedReadFloor(at(-behind), at(0))).toBe(at(-behind));
    expect(trustedReadFloor(at(-behind - 0.001), at(0))).toBeNull();
    expect(trustedReadFloor(at(86_400), at(0))).toBeNull();
  });
});

describe('lateLately', () => {
  it('holds for LATE_EVENT_HOLD_SECONDS after the late event, and when the local clock went back before it', () => {
    expect(lateLately(null, at(0))).toBe(false);
    expect(lateLately(at(0), at(0))).toBe(true);
    expect(lateLately(at(0), at(LATE_EVENT_HOLD_SECONDS - 0.001))).toBe(true);
    expect(lateLately(at(0), at(LATE_EVENT_HOLD_SECONDS))).toBe(false);
    expect(lateLately(at(0), at(-10))).toBe(true);
  });
});

describe('ending a tick at its reach', () => {
  it('needs a reach, pages in newest-first order so far, and a page whose oldest event lies before the reach', () => {
    const page = [at(3), at(2), at(-1.5)];
    expect(reachedBelow(at(-1), page, true)).toBe(true);
    expect(reachedBelow(undefined, page, true)).toBe(false);
    expect(reachedBelow(at(-1), page, false)).toBe(false);
    expect(reachedBelow(at(-1), [at(3), at(-1)], true)).toBe(false); // at the reach: more may share its millisecond
    expect(reachedBelow(at(-1), [], true)).toBe(false);
  });

  it('newest first: within a page, and from one page to the next', () => {
    expect(newestFirst([at(3), at(3), at(1)], null)).toBe(true);
    expect(newestFirst([at(1), at(3)], null)).toBe(false);
    expect(newestFirst([at(1), at(0)], at(1))).toBe(true);
    expect(newestFirst([at(2), at(0)], at(1))).toBe(false);
    expect(newestFirst([], at(1))).toBe(true);
    expect(newestFirst(['not a date'], null)).toBe(false);
  });
});
