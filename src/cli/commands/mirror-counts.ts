import type { Store } from '../../store/index.js';

/** A few figures straight from the mirror's tables, for the demo's closing lines. */
export async function printMirrorCounts(store: Store, out: (line: string) => void): Promise<void> {
  const counts = await store.counts();
  out(
    `Mirror: ${counts.tickets ?? 0} tickets, ${counts.ticket_messages ?? 0} messages, ${counts.deals ?? 0} deals, ${counts.events ?? 0} events, ${counts.ticket_history ?? 0} ticket history rows, ${counts.quarantine ?? 0} quarantined.`,
  );
  const statuses = await store.ticketsByStatus();
  out(`Tickets by status: ${statuses.map((s) => `${s.status} ${s.count}`).join(', ')}`);
}
