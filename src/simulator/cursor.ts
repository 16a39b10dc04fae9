import { ApiError } from './errors.js';
import type { World } from './world.js';

/**
 * Opaque cursors: base64url of a small JSON document holding the list kind, the keyset position,
 * the snapshot sequence (tickets, deals), the filters of the first page, the simulated issue time
 * (for cursorTtlMs) and a serial number (for expireCursors).
 */
export interface CursorState {
  kind: 'tickets' | 'deals' | 'events';
  /** Snapshot sequence; 0 for events. */
  snapshot: number;
  ms: number;
  /** Record id (tickets, deals) or event sequence as a string (events). */
  key: string;
  filters: Record<string, string>;
  /** Under `listPaging: 'offset'`: the position of the next page's first item in the list as it then is. */
  offset?: number;
  /** Which page of its listing this cursor asks for (the first page is 1, so a cursor's is 2 or more). */
  page?: number;
}

interface Wire {
  v: 1;
  k: CursorState['kind'];
  s: number;
  m: number;
  i: string;
  f: Record<string, string>;
  t: number;
  n: number;
  o?: number;
  p?: number;
}

export function encodeCursor(world: World, c: CursorState): string {
  const wire: Wire = { v: 1, k: c.kind, s: c.snapshot, m: c.ms, i: c.key, f: c.filters, t: world.clock.nowMs(), n: ++world.cursorSerial };
  if (c.offset !== undefined) wire.o = c.offset;
  if (c.page !== undefined) wire.p = c.page;
  return Buffer.from(JSON.stringify(wire)).toString('base64url');
}

function garbage(reason: string): ApiError {
  return new ApiError(400, 'invalid_cursor', `The cursor is not valid (${reason}); start again from the first page.`, [
    { field: 'cursor', message: reason },
  ]);
}

export function decodeCursor(world: World, kind: CursorState['kind'], raw: string): CursorState {
  let wire: Partial<Wire>;
  try {
    wire = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as Partial<Wire>;
  } catch {
    throw garbage('not a cursor issued by this server');
  }
  if (
    typeof wire !== 'object' ||
    wire === null ||
    wire.v !== 1 ||
    typeof wire.s !== 'number' ||
    typeof wire.m !== 'number' ||
    typeof wire.i !== 'string' ||
    typeof wire.t !== 'number' ||
    typeof wire.n !== 'number' ||
    typeof wire.f !== 'object' ||
    wire.f === null ||
    (wire.o !== undefined && (!Number.isInteger(wire.o) || wire.o < 0)) ||
    (wire.p !== undefined && !Number.isInteger(wire.p))
  )
    throw garbage('not a cursor issued by this server');
  if (wire.k !== kind) throw garbage(`issued for the ${String(wire.k)} list, not ${kind}`);
  const ttl = world.faults.cursorTtlMs;
  if (wire.n <= world.cursorsExpiredUpTo || (ttl > 0 && world.clock.nowMs() - wire.t > ttl))
    throw new ApiError(410, 'cursor_expired', 'The cursor has expired; start again from the first page.');
  const c: CursorState = { kind, snapshot: wire.s, ms: wire.m, key: wire.i, filters: wire.f };
  if (wire.o !== undefined) c.offset = wire.o;
  if (wire.p !== undefined) c.page = wire.p;
  return c;
}

/**
 * A page after the first uses the filters of the first page. Repeating them is fine, changing
 * them is refused, so a client can never mix two different lists by accident.
 */
export function filtersFor(cursor: CursorState | null, query: Record<string, string>, names: readonly string[]): Record<string, string> {
  const given: Record<string, string> = {};
  for (const n of names) if (query[n] !== undefined) given[n] = query[n];
  if (cursor === null) return given;
  for (const [n, v] of Object.entries(given)) {
    if (cursor.filters[n] !== v) throw garbage(`issued for a different ${n} filter`);
  }
  return cursor.filters;
}
