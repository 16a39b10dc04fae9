import type { StatusReport } from './status-report.js';

/**
 * The `status` line on the mirror's "current as of" (docs/design.md §4.11): the instant, what it
 * rests on, and what holds it back, or why it is unknown.
 */
export function asOfLine(r: Pick<StatusReport, 'currentAsOf' | 'live' | 'quarantinedByType'>): string {
  const state = r.currentAsOf;
  const asOf = r.live.freshness.currentAsOf ?? state?.asOf ?? null;
  if (asOf === null)
    return state === null
      ? 'unknown: no sync cycle has completed yet'
      : 'unknown: the workspace sent no trustworthy Date header to bound what the last cycles saw (docs/sync.md, "Hostile upstream")';
  const quarantined = Object.values(r.quarantinedByType).reduce((a, b) => a + b, 0);
  const parts = [`${asOf}: every change up to then visible within ${state?.overlapSeconds ?? '?'} s is in the mirror`];
  if (quarantined > 0) parts.push(`or among the ${quarantined} quarantined`);
  if (state?.heldBy)
    parts.push(
      `; held back by ${state.heldBy.entityType} ${state.heldBy.entityId}, still dirty since its change at ${state.heldBy.occurredAt}`,
    );
  if (state) parts.push(` (recorded ${state.recordedAt})`);
  return parts.join(' ').replace(' ;', ';').replace('  (', ' (');
}
