/**
 * The mirrored record types: the one place their union is spelled. Everything else names a type
 * through `RecordType` and reaches its behaviour through `entityOf` (src/entities/index.ts). A
 * leaf module, so the API client can name the type without importing the registry (which imports
 * the store, which imports the client).
 */
export type RecordType = 'ticket' | 'deal';
