/**
 * What the client answers besides the records themselves. The record types (Ticket, Deal, …) are
 * derived from their zod schemas in schemas.ts (docs/upstream.md, "Records") and re-exported here
 * for the modules that import them by this name.
 */
export type {
  Company,
  ContactRef,
  Deal,
  DealContact,
  Message,
  Pipeline,
  Sla,
  Stage,
  Ticket,
  TicketWithMessages,
  UserRef,
  WorkspaceEvent,
} from './schemas.js';

import type { z } from 'zod';

/**
 * Where one list is read and how its items are checked (docs/upstream.md, "Endpoints read"): a mirrored
 * entity names its own (src/entities), so the client reads any list without a method per type.
 */
export interface ListSource<T> {
  /** The list's path under the base URL (`/api/v1/tickets`). */
  readonly path: string;
  /** The answer's array key (`{"tickets": [...]}`). */
  readonly key: string;
  /** The entityType an invalid item is quarantined under. */
  readonly entityType: string;
  readonly schema: z.ZodType<T>;
}

/** Where one record is read by id (`GET <base>/api/v1/<collection>/<id>`, the answer under `key`). */
export interface RecordSource<T> {
  readonly collection: string;
  readonly key: string;
  readonly entityType: string;
  readonly schema: z.ZodType<T>;
}

/** A record of a list page (or a single read) that failed validation: quarantined, never fatal. */
export interface InvalidItem {
  /** The upstream entityType of what failed: a record type (src/entities), `event` or `pipeline`. */
  entityType: string;
  /** The record's id when it could be read at all. */
  id: string | null;
  reason: string;
  raw: unknown;
}

export interface Page<T> {
  items: T[];
  invalid: InvalidItem[];
  nextCursor: string | null;
  /** The upstream's clock when it answered (its `Date` header, ISO); null when it sent none. */
  serverDate?: string | null;
}
