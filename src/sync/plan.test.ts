import { describe, expect, it } from 'vitest';
import type { DirtyEntry, ListedCopy } from '../store/index.js';
import { planType, rankingDepth } from './plan.js';
import type { RecordType } from '../entities/index.js';

const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const at = (minutes: number) => new Date(T0 + minutes * 60_000).toISOString();
const dirty = (entityType: RecordType, id: string, minute: number, readUnlisted = false): DirtyEntry => ({
  entityType,
  entityId: id,
  occurredAt: at(minute),
  staleReads: 0,
  readUnlisted,
});
/** The mirror's live records, newest first: `count` of them, one a minute back from `newestMinute`. */
const mirror = (count: number, newestMinute: number): ListedCopy[] =>
  Array.from({ length: count }, (_, i) => ({ id: `m${i}`, updatedAt: at(newestMinute - i) }));

describe('planType, the drain cost model', () => {
  it('lists many recent deals on one page instead of one read each', () => {
    const entries = Array.from({ length: 30 }, (_, i) => dirty('deal', `d${i}`, 1000 + i));
    const p = planType('deal', entries, mirror(20, 999), true, 100, 'auto');
    expect(p.viaList).toHaveLength(30);
    expect(p.viaRecord).toEqual([]);
    expect(p.estimatedPages).toBe(1);
    expect(p.estimatedRequests).toBe(1);
    expect(p.recordRequests).toBe(30);
    expect(p.listDownTo).toBe(at(1000));
  });

  it('reads one dirty record by id: a page would cost the same', () => {
    const p = planType('deal', [dirty('deal', 'd1', 1000)], mirror(50, 999), true, 100, 'auto');
    expect(p.viaList).toEqual([]);
    expect(p.viaRecord.map((e) => e.entityId)).toEqual(['d1']);
    expect(p.estimatedRequests).toBe(1);
  });

  it('reads tickets whose messages may have changed by id, and lists the others', () => {
    const entries = [
      ...Array.from({ length: 5 }, (_, i) => dirty('ticket', `f${i}`, 1000 + i)),
      dirty('ticket', 'r1', 1001, true),
      dirty('ticket', 'r2', 1002, true),
    ];
    const p = planType('ticket', entries, mirror(10, 999), true, 100, 'auto');
    expect(p.viaList.map((e) => e.entityId).sort()).toEqual(['f0', 'f1', 'f2', 'f3', 'f4']);
    expect(p.viaRecord.map((e) => e.entityId).sort()).toEqual(['r1', 'r2']);
    expect(p.estimatedRequests).toBe(3);
    expect(p.recordRequests).toBe(7);
  });

  it('reads a mark too deep in the list by id, and lists the recent ones', () => {
    // 300 records updated since minute 0: the old mark lies on page 4 of 100.
    const entries = [...Array.from({ length: 10 }, (_, i) => dirty('deal', `d${i}`, 2000 + i)), dirty('deal', 'old', 0)];
    const p = planType('deal', entries, mirror(300, 1999), true, 100, 'auto');
    expect(p.viaList.map((e) => e.entityId)).not.toContain('old');
    expect(p.viaList).toHaveLength(10);
    expect(p.viaRecord.map((e) => e.entityId)).toEqual(['old']);
    expect(p.estimatedRequests).toBe(2);
  });

  it('pages deeper when enough marks lie there to pay for the pages', () => {
    // 250 records above the marks: 3 pages for 20 marks beat 20 reads.
    const entries = Array.from({ length: 20 }, (_, i) => dirty('deal', `d${i}`, 1750 + i));
    const p = planType('deal', entries, mirror(250, 2000), true, 100, 'auto');
    expect(p.viaList).toHaveLength(20);
    expect(p.estimatedPages).toBe(3);
  });

  it('counts a dirty record already in the mirror once when ranking', () => {
    const entries = Array.from({ length: 3 }, (_, i) => dirty('deal', `m${i}`, 1000 + i));
    // The same three ids are the mirror's newest: 3 records down to the oldest mark (2 pages of 2), not 6 (3 pages).
    const p = planType('deal', entries, mirror(3, 999), true, 2, 'list');
    expect(p.estimatedPages).toBe(2);
    // auto: two marks on the first page and one read by id (2 requests) beat 2 pages or 3 reads.
    const auto = planType('deal', entries, mirror(3, 999), true, 2, 'auto');
    expect([auto.viaList.length, auto.viaRecord.length, auto.estimatedRequests]).toEqual([2, 1, 2]);
  });

  it('"list" lists every list-able record whatever it costs; "record" lists none', () => {
    const entries = [dirty('deal', 'd1', 1000), dirty('deal', 'old', 0)];
    const listed = planType('deal', entries, mirror(1000, 999), true, 100, 'list');
    expect(listed.viaList.map((e) => e.entityId)).toEqual(['d1', 'old']);
    expect(listed.listDownTo).toBe(at(0));
    const byId = planType('deal', entries, mirror(1000, 999), true, 100, 'record');
    expect(byId.viaList).toEqual([]);
    expect(byId.viaRecord).toHaveLength(2);
  });

  it('a mark below the part of the mirror it read counts as too deep to list', () => {
    const entries = [...Array.from({ length: 3 }, (_, i) => dirty('deal', `d${i}`, 1000 + i)), dirty('deal', 'old', 0)];
    const p = planType('deal', entries, mirror(5, 999), false, 100, 'auto');
    expect(p.viaRecord.map((e) => e.entityId)).toEqual(['old']);
    expect(p.viaList).toHaveLength(3);
  });

  it('reads no more of the mirror than a list plan could pay for', () => {
    expect(rankingDepth(3, 100)).toBe(300);
    expect(rankingDepth(10_000, 100)).toBe(50_000);
  });
});
