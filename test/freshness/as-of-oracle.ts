import type { Truth } from '../../src/simulator/index.js';
import type { Store } from '../../src/store/index.js';

interface TruthEvent {
  id: string;
  entityType: string;
  entityId: string;
  occurredAt: string;
}
interface TruthRecord {
  id: string;
  updatedAt: string;
}

/**
 * The claim of "current as of" (docs/design.md §4.11) checked against the simulator's truth, not
 * against the code's own notion of it: for every ticket or deal event visible now that happened at
 * or before `asOf`, the mirror holds a copy at least as new as that change (or as new as the
 * record is at all, for events that do not move `updatedAt`), holds it as deleted when it is
 * gone, or lists it in quarantine. Returns one line per change the claim misses.
 */
export async function claimMisses(
  store: Store,
  truth: Truth,
  asOf: string,
  quarantined: ReadonlySet<string> = new Set(),
): Promise<string[]> {
  const at = Date.parse(asOf);
  const live = {
    ticket: new Map((truth.tickets as TruthRecord[]).map((t) => [t.id, t])),
    deal: new Map((truth.deals as TruthRecord[]).map((d) => [d.id, d])),
  };
  const mirror = { ticket: await store.mirroredVersions('ticket'), deal: await store.mirroredVersions('deal') };
  const misses: string[] = [];
  for (const e of truth.events as TruthEvent[]) {
    if (e.entityType !== 'ticket' && e.entityType !== 'deal') continue;
    if (Date.parse(e.occurredAt) > at) continue;
    const key = `${e.entityType}:${e.entityId}`;
    if (quarantined.has(key)) continue;
    const copy = mirror[e.entityType].get(e.entityId);
    const upstream = live[e.entityType].get(e.entityId);
    if (upstream === undefined) {
      // Deleted (a deal) or hidden (a ticket): the mirror must hold it as deleted.
      if (copy?.deletedAt == null) misses.push(`${key} is gone upstream since ${e.occurredAt} but not deleted in the mirror`);
      continue;
    }
    const needed = Math.min(Date.parse(e.occurredAt), Date.parse(upstream.updatedAt));
    if (copy === undefined || Date.parse(copy.updatedAt) < needed)
      misses.push(`${key}: event ${e.id} at ${e.occurredAt}, the mirror holds ${copy?.updatedAt ?? 'nothing'}`);
  }
  return misses;
}
