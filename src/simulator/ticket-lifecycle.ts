import { notFound } from './errors.js';
import { beginTicketWrite, commitTicketWrite, findListedTicket } from './ticket-ops.js';
import { changeStatus } from './ticket-status.js';
import type { Ticket } from './model.js';
import type { HideReason } from './types.js';
import type { World } from './world.js';

/** Ticket writes that no API endpoint performs: control actions and the auto-close automation. */

export function hideTicket(world: World, id: string, reason: HideReason, mergedInto?: string): void {
  const t = findListedTicket(world, id);
  const ms = world.clock.nowMs();
  beginTicketWrite(world, t);
  t.hidden = reason;
  const type = reason === 'deleted' ? 'ticket.deleted' : reason === 'spam' ? 'ticket.spam' : 'ticket.merged';
  const payload = reason === 'merged' ? { number: t.number, into: mergedInto ?? null } : { number: t.number };
  world.emit(type, 'ticket', t.id, payload, null, ms);
  commitTicketWrite(world, t, ms);
}

export function removeMessage(world: World, ticketId: string, messageId: string): void {
  const t = findListedTicket(world, ticketId);
  const i = t.messages.findIndex((m) => m.id === messageId);
  if (i < 0) throw notFound('message', messageId);
  const ms = world.clock.nowMs();
  beginTicketWrite(world, t);
  t.messages.splice(i, 1);
  world.emit('ticket.message_removed', 'ticket', t.id, { messageId }, null, ms);
  commitTicketWrite(world, t, ms);
}

/** Corruption and repair are served-shape changes; they still bump updatedAt and log an update. */
export function setTicketCorruption(world: World, id: string, how: Ticket['corrupt']): void {
  const t = findListedTicket(world, id);
  const ms = world.clock.nowMs();
  beginTicketWrite(world, t);
  t.corrupt = how;
  world.emit('ticket.updated', 'ticket', t.id, {}, null, ms);
  commitTicketWrite(world, t, ms);
}

/** The auto-close automation, checked lazily against the simulated clock. */
export function runAutomations(world: World): void {
  const after = world.settings.autoCloseSolvedAfterMs;
  if (after <= 0) return;
  const q = world.solvedQueue;
  const now = world.clock.nowMs();
  while (world.solvedHead < q.length) {
    const entry = q[world.solvedHead];
    if (entry === undefined || entry.solvedAtMs + after > now) break;
    world.solvedHead++;
    const t = entry.ticket;
    if (t.hidden !== null || t.status !== 'solved' || t.statusChangedAtMs !== entry.solvedAtMs) continue;
    beginTicketWrite(world, t);
    changeStatus(world, t, 'closed', null, now);
    commitTicketWrite(world, t, now);
  }
  if (world.solvedHead > 1024 && world.solvedHead * 2 > q.length) {
    q.splice(0, world.solvedHead);
    world.solvedHead = 0;
  }
}
