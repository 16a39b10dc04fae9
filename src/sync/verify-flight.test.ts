import { describe, expect, it } from 'vitest';
import { classify, type Candidate, type RecentChanges } from './verify-flight.js';

const AS_OF = '2026-01-01T12:00:00.000Z';
const none: RecentChanges = { byRecord: new Map(), deals: false, leaving: new Set(), truncated: false };

function candidate(
  entityType: Candidate['drift']['entityType'],
  entityId: string,
  kind: Candidate['drift']['kind'],
  upstream: string | number | null,
): Candidate {
  return { drift: { entityType, entityId, kind, upstream, mirror: null }, before: null };
}

const ids = (cs: readonly Candidate[]) => cs.map((c) => c.drift.entityId);

describe('verify: drift or in flight', () => {
  it('a listed version after the as-of is in flight; at or before it, drift', () => {
    const r = classify(
      [candidate('ticket', 'late', 'outdated', '2026-01-01T12:00:00.001Z'), candidate('ticket', 'held', 'outdated', AS_OF)],
      AS_OF,
      none,
    );
    expect(ids(r.inFlight)).toEqual(['late']);
    expect(r.inFlight[0]!.changedAt).toBe('2026-01-01T12:00:00.001Z');
    expect(ids(r.drift)).toEqual(['held']);
  });

  it('a record the change log names after the as-of is in flight, even with no listed version (an extra)', () => {
    const recent: RecentChanges = {
      byRecord: new Map([['deal:gone', '2026-01-01T12:00:05.000Z']]),
      deals: true,
      leaving: new Set(),
      truncated: false,
    };
    const r = classify([candidate('deal', 'gone', 'extra', null), candidate('deal', 'old', 'extra', null)], AS_OF, recent);
    expect(ids(r.inFlight)).toEqual(['gone']);
    expect(ids(r.drift)).toEqual(['old']);
  });

  it("a pipeline's deal count is in flight while any deal is, and drift when none is", () => {
    const count = candidate('pipeline', 'p1', 'deal_count', 7);
    const stored: Candidate = { drift: { ...count.drift, kind: 'content', field: 'deal_count', fields: ['deal_count'] }, before: null };
    const renamed: Candidate = { drift: { ...count.drift, kind: 'content', field: 'name', fields: ['name'] }, before: null };
    const moving = classify([count, stored, renamed], AS_OF, { ...none, deals: true });
    expect(moving.inFlight.map((c) => c.drift.field ?? c.drift.kind)).toEqual(['deal_count', 'deal_count']);
    expect(moving.drift.map((c) => c.drift.field)).toEqual(['name']);
    expect(classify([count], AS_OF, none).drift).toHaveLength(1);
  });

  it('without an as-of the mirror claims nothing: every difference is drift, never hidden', () => {
    const r = classify([candidate('ticket', 't', 'outdated', '2030-01-01T00:00:00.000Z')], null, none);
    expect(r.inFlight).toEqual([]);
    expect(ids(r.drift)).toEqual(['t']);
  });
});
