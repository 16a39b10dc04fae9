import { priorityDef } from './catalog.js';
import type { Ticket } from './model.js';

const HOUR = 3_600_000;

export function slaDue(priority: string, createdMs: number): { firstReplyDueMs: number; resolveDueMs: number } {
  const p = priorityDef(priority);
  return { firstReplyDueMs: createdMs + p.firstReplyHours * HOUR, resolveDueMs: createdMs + p.resolveHours * HOUR };
}

/** Breaches are recorded when the ticket is written (no background SLA timer): the due time is the breach time. */
export function refreshSla(t: Ticket, nowMs: number): void {
  const reply = t.firstAgentReplyAtMs ?? nowMs;
  t.firstReplyBreachedMs = reply > t.firstReplyDueMs ? t.firstReplyDueMs : null;
  const resolved = t.resolvedAtMs ?? nowMs;
  t.resolveBreachedMs = resolved > t.resolveDueMs ? t.resolveDueMs : null;
}
