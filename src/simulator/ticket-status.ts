import { resolveStatus, settableStatuses, statusCategory } from './catalog.js';
import { logChanges } from './change-log.js';
import { ApiError, type Issues } from './errors.js';
import type { FieldChange, Ticket } from './model.js';
import type { World } from './world.js';

/** A ticket's status moves and the checks on a requested status, shared by the API, automations and activity. */

/**
 * Moves the ticket to `to` (without logging) and returns the change to log, or null when it is
 * already there; the caller brackets it with begin/commit.
 */
export function applyStatus(world: World, t: Ticket, to: string, ms: number): FieldChange | null {
  const from = t.status;
  if (from === to) return null;
  t.status = to;
  t.statusChangedAtMs = ms;
  if (to === 'solved') {
    t.resolvedAtMs = ms;
    world.solvedQueue.push({ ticket: t, solvedAtMs: ms });
  } else if (statusCategory(to) === 'unresolved') {
    t.resolvedAtMs = null;
  } else if (t.resolvedAtMs === null) {
    // Into another resolved status (unlisted `archived`) from an unresolved one.
    t.resolvedAtMs = ms;
  }
  return { field: 'status', from, to };
}

/** Moves the ticket to `to` and logs it as a write of its own. */
export function changeStatus(world: World, t: Ticket, to: string, actor: string | null, ms: number): void {
  const change = applyStatus(world, t, to, ms);
  if (change) logChanges(world, 'ticket', t.id, [change], actor, ms);
}

export function settableStatus(world: World, input: unknown, field: string, issues: Issues): string | undefined {
  if (typeof input !== 'string') {
    issues.add(field, 'must be a status value or label');
    return undefined;
  }
  const def = resolveStatus(input, world.dialect.unlistedValues);
  if (!def) {
    const values = settableStatuses(world.dialect.unlistedValues);
    issues.add(field, `unknown status; use ${values.slice(0, -1).join(', ')} or ${values[values.length - 1]} (or their labels)`);
    return undefined;
  }
  if (def.value === 'closed') {
    throw new ApiError(422, 'status_not_settable', 'Status closed cannot be set by hand; solved tickets are closed by automation.', [
      { field, message: 'closed cannot be set by hand' },
    ]);
  }
  return def.value;
}

export function refuseIfClosed(t: Ticket, what: string): void {
  if (t.status === 'closed')
    throw new ApiError(422, 'ticket_closed', `Ticket ${t.id} is closed; ${what} is not possible on a closed ticket.`);
}
