import { describe, expect, it } from 'vitest';
import type { Page, WorkspaceEvent } from '../../src/api/index.js';
import { lagBetween } from '../../src/sync/index.js';
import { FUTURE_TOLERANCE_MS, plausibleHead } from '../../src/sync/index.js';

const event = (occurredAt: string): WorkspaceEvent => ({
  id: occurredAt,
  type: 't',
  entityType: 'ticket',
  entityId: 't_1',
  payload: {},
  actor: null,
  occurredAt,
});
const page = (items: WorkspaceEvent[], serverDate: string | null): Page<WorkspaceEvent> => ({
  items,
  invalid: [],
  nextCursor: null,
  serverDate,
});

/** The lag figure is a number only when the mirror can know it (docs/sync.md, "Hostile upstream"). */
describe('lag with a hostile head', () => {
  const clock = '2026-01-01T12:00:00.000Z';

  it('skips events beyond the upstream clock plus the tolerance when choosing the head', () => {
    const p = page([event('9999-12-31T23:59:59.000Z'), event('2026-01-01T11:59:00.000Z')], clock);
    expect(plausibleHead(p, clock)).toMatchObject({ head: '2026-01-01T11:59:00.000Z', unknown: false, clockAhead: null });
    const within = new Date(Date.parse(clock) + FUTURE_TOLERANCE_MS).toISOString();
    expect(plausibleHead(page([event(within)], clock), clock).head).toBe(within);
  });

  it('a page holding only implausible events gives an unknown head, never a lag of 0', () => {
    const r = plausibleHead(page([event('9999-12-31T23:59:59.000Z')], clock), clock);
    expect(r).toMatchObject({ head: null, unknown: true });
    expect(lagBetween(r.head, '2026-01-01T11:00:00.000Z')).toBeNull();
  });

  it('uses the local clock only when the upstream sends no Date header', () => {
    const r = plausibleHead(page([event('2026-01-01T12:30:00.000Z')], null), clock);
    expect(r.unknown).toBe(true);
  });

  it('an empty log with an empty mirror is caught up (0); a watermark with no head is unknown', () => {
    expect(lagBetween(null, null)).toBe(0);
    expect(lagBetween(null, clock)).toBeNull();
    expect(lagBetween('2026-01-01T12:01:00.000Z', clock)).toBe(60);
  });
});
