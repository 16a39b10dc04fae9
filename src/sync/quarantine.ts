import type { InvalidItem } from '../api/index.js';
import type { StoreTx } from '../store/index.js';

/** Records of a page that failed validation go to quarantine; the rest of the page syncs (SPEC 4.5). */
export async function quarantineInvalid(tx: StoreTx, items: readonly InvalidItem[], at: string): Promise<void> {
  for (const item of items) {
    await tx.quarantine({ entityType: item.entityType, entityId: item.id, reason: item.reason, raw: item.raw }, at);
  }
}
