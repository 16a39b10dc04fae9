import type { DirtyEntry } from '../store/index.js';
import { shiftIso } from '../util/time.js';
import type { SyncContext } from './context.js';
import { readAsOf, readReadFloor, recordAsOfAlone, type AsOfState } from './state.js';
import { DEFAULT_TICK_OVERLAP_MIN_SECONDS, DEFAULT_TICK_OVERLAP_SECONDS } from './window.js';

/**
 * The guaranteed overlap of a tick (docs/sync.md, "The overlap's cost"): an event visible late by
 * up to this is read by the first window that starts after it became visible. The "current as of"
 * claim covers such events only (docs/design.md §4.11).
 */
export function guaranteedOverlapSeconds(config: SyncContext['config']): number {
  return Math.min(
    config.tickOverlapMinSeconds ?? DEFAULT_TICK_OVERLAP_MIN_SECONDS,
    config.tickOverlapSeconds ?? DEFAULT_TICK_OVERLAP_SECONDS,
  );
}

export interface AsOfInput {
  /** The read floor of the window just closed (an upstream `Date` answered before its first request); null when untrusted. */
  readFloor: string | null;
  overlapSeconds: number;
  /** The as-of recorded before, used when this window has no read floor: what it claimed still holds. */
  previous: string | null;
  /** The oldest mark still in the dirty set after the drain, if any. */
  oldestDirty: Pick<DirtyEntry, 'entityType' | 'entityId' | 'occurredAt'> | null;
}

/**
 * docs/design.md §4.11. A window whose first request the upstream answered after its read floor F
 * saw every event visible by F; an event late by at most the guaranteed overlap g that happened at
 * or before F − g was visible by F, so that window or an earlier one read it, and the drain that
 * followed re-read its record. A record still dirty after the drain did not get its change in: the
 * as-of stays just before its mark. Without a trusted F the previous as-of stands (the mirror only
 * gained since), bounded the same way; with neither it is unknown (null), never guessed.
 */
export function computeAsOf(input: AsOfInput): { asOf: string | null; heldBy: AsOfState['heldBy'] } {
  const fromFloor = input.readFloor === null ? null : shiftIso(input.readFloor, -input.overlapSeconds * 1000);
  const base = fromFloor ?? input.previous;
  if (base === null) return { asOf: null, heldBy: null };
  const d = input.oldestDirty;
  if (d !== null && Date.parse(d.occurredAt) <= Date.parse(base)) {
    return { asOf: shiftIso(d.occurredAt, -1), heldBy: { entityType: d.entityType, entityId: d.entityId, occurredAt: d.occurredAt } };
  }
  return { asOf: base, heldBy: null };
}

/**
 * Records the as-of after a cycle whose window closed and whose drain ran, and tells the hooks once
 * it has committed (the daemon's /wait answers from that). Never called for a failed or stopped
 * cycle: the as-of then stays what the last complete one recorded.
 */
export async function advanceAsOf(ctx: SyncContext, known: { oldestLeft?: DirtyEntry | null } = {}): Promise<AsOfState> {
  const { store } = ctx;
  const oldest = known.oldestLeft !== undefined ? known.oldestLeft : (await store.listDirty(1))[0];
  const overlapSeconds = guaranteedOverlapSeconds(ctx.config);
  const readFloor = await readReadFloor(store);
  const previous = (await readAsOf(store))?.asOf ?? null;
  const { asOf, heldBy } = computeAsOf({ readFloor, overlapSeconds, previous, oldestDirty: oldest ?? null });
  const state: AsOfState = { asOf, recordedAt: ctx.now(), readFloor, overlapSeconds, heldBy };
  await recordAsOfAlone(store, state);
  ctx.hooks?.onAsOf?.(state);
  return state;
}
