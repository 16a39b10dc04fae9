/**
 * The upstream records as wsmirror relies on them (docs/upstream.md, "Records"). Field names follow the
 * API exactly. Every object may carry extra fields docs/upstream.md does not list; the zod schemas in
 * schemas.ts keep them (passthrough) so the raw JSON stored in the mirror loses nothing.
 * Timestamps are ISO 8601 strings as received (validated as parseable, not reformatted here).
 */

export interface UserRef {
  id: string;
  name: string | null;
  email: string | null;
  [extra: string]: unknown;
}

export interface ContactRef {
  id: string;
  firstName: string | null;
  lastName: string | null;
  email: string | null;
  [extra: string]: unknown;
}

export interface Sla {
  firstReplyDueAt: string | null;
  resolveDueAt: string | null;
  firstReplyBreachedAt: string | null;
  resolveBreachedAt: string | null;
  [extra: string]: unknown;
}

export interface Ticket {
  id: string;
  number: number;
  key: string;
  subject: string;
  /** Stored as it comes: unknown statuses are not an error (docs/design.md §4.5). */
  status: string;
  priority: string;
  summary: string | null;
  tags: string[];
  fields: Record<string, unknown>;
  contact: ContactRef | null;
  assignee: UserRef | null;
  /** Shape the upstream does not promise; kept as JSON. `id`/`name` used when present. */
  team: Record<string, unknown> | null;
  cc: unknown[];
  messageCount: number;
  sla: Sla | null;
  firstAgentReplyAt: string | null;
  resolvedAt: string | null;
  statusChangedAt: string | null;
  createdAt: string;
  updatedAt: string;
  [extra: string]: unknown;
}

export interface Message {
  id: string;
  body: string;
  authorType: string;
  author: UserRef | null;
  isInternal: boolean;
  attachments: unknown[];
  createdAt: string;
  [extra: string]: unknown;
}

export interface TicketWithMessages extends Ticket {
  messages: Message[];
}

export interface Stage {
  id: string;
  name: string;
  position: number;
  isWon: boolean;
  isLost: boolean;
  [extra: string]: unknown;
}

export interface Pipeline {
  id: string;
  name: string;
  dealCount: number;
  stages: Stage[];
  [extra: string]: unknown;
}

export interface DealContact extends ContactRef {
  isPrimary: boolean;
}

export interface Company {
  id: string;
  name: string | null;
  domain: string | null;
  [extra: string]: unknown;
}

export interface Deal {
  id: string;
  name: string;
  /** Decimal string with two decimals (may arrive as a number from a lax server; normalised to string). */
  amount: string | null;
  currency: string | null;
  closeDate: string | null;
  /** `open`, `won`, `lost`, or anything else a server sends (stored as it comes). */
  status: string;
  pipeline: { id: string; name: string | null; [extra: string]: unknown };
  stage: Stage;
  owner: UserRef | null;
  company: Company | null;
  contacts: DealContact[];
  fields: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
  [extra: string]: unknown;
}

export interface WorkspaceEvent {
  id: string;
  /** `<entityType>.<verb>`; unknown types are stored as they come. */
  type: string;
  entityType: string;
  entityId: string;
  payload: Record<string, unknown>;
  actor: UserRef | null;
  occurredAt: string;
  [extra: string]: unknown;
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
