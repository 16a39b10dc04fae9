import type { RecordType } from '../entities/index.js';

/** One difference verify found between the mirror and the workspace (drift, or a change in flight). */
export interface Drift {
  entityType: RecordType | 'pipeline' | 'stage';
  entityId: string;
  /** `content`: same version (`updatedAt`), different rows; `field` names the first column or child table that differs. */
  kind: 'missing' | 'extra' | 'outdated' | 'deal_count' | 'content';
  /** For `content`: the first column (`subject`) or child table (`ticket_tags`) that differs. */
  field?: string;
  /** For `content`: every column or child table that differs. */
  fields?: string[];
  upstream: string | number | null;
  mirror: string | number | null;
}
