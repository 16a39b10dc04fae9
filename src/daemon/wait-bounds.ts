/** The bounds every GET /wait shares, whether it waits for an instant or for one record. */

/** Waiters held at once; one more is refused with 429 (each holds a socket and a timer, nothing else). */
export const MAX_WAITERS = 1000;
/** `timeoutMs` when the request names none. */
export const DEFAULT_WAIT_TIMEOUT_MS = 30_000;
/** The longest `timeoutMs` allowed: past it a client should ask again, not hold a socket. */
export const MAX_WAIT_TIMEOUT_MS = 300_000;
