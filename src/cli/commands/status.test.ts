import { describe, expect, it } from 'vitest';
import { lateEventLine } from './status.js';

describe('the status line on late events', () => {
  const late = {
    seenAt: '2026-01-01T12:00:00.000Z',
    eventId: 'evt_1',
    occurredAt: '2026-01-01T11:59:40.000Z',
    wholeOverlapUntil: '2026-01-01T13:00:00.000Z',
  };

  it('says none were seen, or which was last and whether ticks still read the whole overlap', () => {
    expect(lateEventLine(null, '2026-01-01T12:30:00.000Z')).toBe('none seen beyond the guaranteed tick overlap');
    expect(lateEventLine(late, '2026-01-01T12:30:00.000Z')).toBe(
      'last evt_1 (occurred 2026-01-01T11:59:40.000Z), read 2026-01-01T12:00:00.000Z; ticks re-read the whole overlap until 2026-01-01T13:00:00.000Z',
    );
    expect(lateEventLine(late, '2026-01-01T13:00:00.000Z')).toMatch(/; ticks re-read the guaranteed overlap again$/);
  });
});
