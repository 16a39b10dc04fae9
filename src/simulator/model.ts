import type { CorruptionKind, HideReason } from './types.js';

/** Internal records. Times are epoch milliseconds; output shapes are built in render.ts. */

export interface Member {
  id: string;
  name: string;
  email: string;
}

export interface Contact {
  id: string;
  firstName: string;
  lastName: string;
  email: string;
  companyId: string | null;
}

export interface Company {
  id: string;
  name: string;
  domain: string;
}

export interface Team {
  id: string;
  name: string;
  /** The rest are shown only by the `rich` team shape. */
  email: string;
  memberCount: number;
  leadId: string;
}

/** Authors of automation messages (unlisted author types); not workspace members. */
export type MessageAuthorType = 'customer' | 'agent' | 'system' | 'bot';

export interface Stage {
  id: string;
  name: string;
  position: number;
  isWon: boolean;
  isLost: boolean;
  pipelineId: string;
}

export interface Pipeline {
  id: string;
  name: string;
  stages: Stage[];
  dealCount: number;
}

export interface Attachment {
  id: string;
  filename: string;
  contentType: string;
  size: number;
}

export interface Message {
  id: string;
  body: string;
  authorType: MessageAuthorType;
  /** A member id for agents, a contact id for customers, an automation author id for system and bot. */
  authorId: string;
  isInternal: boolean;
  attachments: Attachment[];
  createdAtMs: number;
}

export interface CcEntry {
  email: string;
  name: string | null;
}

/**
 * What paging needs of a listed record: its current order key and, for snapshot reads, the
 * order key it had as of any earlier write sequence number.
 */
export interface Listed {
  id: string;
  updatedAtMs: number;
  /** Flat pairs [seq, updatedAtMs, seq, updatedAtMs, ...], oldest first. The first seq is the creation. */
  keyHistory: number[];
  /** Caches of the serialized output; cleared on every write. */
  listJson?: string | undefined;
  fullBody?: Buffer | undefined;
  /** The response body of the version before the last write, for stale reads. */
  prevBody?: Buffer | undefined;
  corrupt: CorruptionKind | null;
}

export interface Ticket extends Listed {
  number: number;
  subject: string;
  status: string;
  priority: string;
  summary: string | null;
  tags: string[];
  fields: Record<string, unknown>;
  contactId: string;
  assigneeId: string | null;
  teamId: string | null;
  cc: CcEntry[];
  messages: Message[];
  firstReplyDueMs: number;
  resolveDueMs: number;
  firstReplyBreachedMs: number | null;
  resolveBreachedMs: number | null;
  firstAgentReplyAtMs: number | null;
  resolvedAtMs: number | null;
  statusChangedAtMs: number;
  createdAtMs: number;
  hidden: HideReason | null;
}

export interface Deal extends Listed {
  name: string;
  /** Exact amount in cents; null when unset. */
  amountCents: number | null;
  currency: string;
  closeDate: string | null;
  stageId: string;
  pipelineId: string;
  ownerId: string | null;
  companyId: string | null;
  contactIds: string[];
  fields: Record<string, unknown>;
  createdAtMs: number;
  deleted: boolean;
}

export interface SimEvent {
  id: string;
  seq: number;
  type: string;
  entityType: string;
  entityId: string;
  payload: object;
  /** A member id, an arbitrary injected actor object, or null for automations. */
  actor: string | object | null;
  occurredAtMs: number;
  visibleAtMs: number;
  json?: string | undefined;
  /** The field changes this event logs, dialect-free; absent when the payload is in the original form (then it tells them). */
  changes?: FieldChange[];
  /** Logged by control.injectEvent: tells no field change whatever its payload says. */
  injected?: true;
}

/** One field change of a write, under its internal (`apiId`) name with ids or scalar values. */
export interface FieldChange {
  field: string;
  from: unknown;
  to: unknown;
}
