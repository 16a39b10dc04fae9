import { RECORD_ENTITIES } from '../../entities/index.js';
import type { Store } from '../../store/index.js';

/** A few figures straight from the mirror's tables, for the demo's closing lines. */
export async function printMirrorCounts(store: Store, out: (line: string) => void): Promise<void> {
  const counts = await store.counts();
  const n = (table: string) => counts[table] ?? 0;
  const records = RECORD_ENTITIES.map((e) => `${n(e.table)} ${e.plural}`);
  const history = RECORD_ENTITIES.reduce((sum, e) => sum + n(e.historyTable), 0);
  out(`Mirror: ${records.join(', ')}, ${n('events')} events, ${history} history rows, ${n('quarantine')} quarantined.`);
  const statuses = await store.ticketsByStatus();
  out(`Tickets by status: ${statuses.map((s) => `${s.status} ${s.count}`).join(', ')}`);
}
