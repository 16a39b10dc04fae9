import { WsmirrorError } from '../util/errors.js';

/**
 * Errors the store raises on purpose. Codes are stable and safe to match on:
 * - `DIALECT_UNSUPPORTED`: the database address names a dialect this build cannot open.
 * - `OPEN_FAILED`: the database could not be opened (path, permissions, missing file for readers).
 * - `MIGRATION_FAILED`: a migration failed; the message names it, `cause` has the driver error.
 * - `MIGRATION_PENDING`: a read-only store found migrations a writer has not applied yet.
 * - `NO_MIRROR`: a read-only store found no mirror at all there (a wrong `schema`, or none made yet).
 * - `LOCK_HELD`: another process is the writer and the caller asked not to wait.
 * - `LOCK_ABORTED`: waiting for the writer lock was cancelled through the AbortSignal.
 * - `READONLY`: a write was attempted through a store opened read-only.
 * - `INVALID_VALUE`: an upstream value cannot be stored (junk amount, timestamp); nothing was
 *   written for that record, so the caller can quarantine it and go on in the same transaction.
 * - `INTERNAL`: code passed the store's internals an object that is not a store or transaction
 *   opened by `openStore` (a programming error, never the data's).
 */
export class StoreError extends WsmirrorError {}
