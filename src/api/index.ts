// The API client's public surface: the sync engine, the CLI and the tests import from here only.
export { createApiClient } from './client.js';
export { MAX_PAGES_WITHOUT_NEW_ITEMS, PagingGuard } from './paging.js';
export type { ApiClient, CallOptions, DealsQuery, EventsQuery, ListQuery, TicketsQuery } from './client.js';
export type { ApiClientOptions, ClientStats, RequestEvent } from './options.js';
export type {
  Company,
  ContactRef,
  Deal,
  DealContact,
  InvalidItem,
  ListSource,
  Message,
  Page,
  Pipeline,
  RecordSource,
  Sla,
  Stage,
  Ticket,
  TicketWithMessages,
  UserRef,
  WorkspaceEvent,
} from './types.js';
export {
  ApiError,
  AuthRejectedError,
  CursorRejectedError,
  InvalidRecordError,
  InvalidResponseError,
  NotFoundError,
  NotWorkspaceApiError,
  PagingError,
  RateLimitedError,
  ResponseTooLargeError,
  UpstreamRejectedError,
  UpstreamUnavailableError,
} from './errors.js';
export { clipText, MAX_ID_CHARS, MAX_JSON_DEPTH, MAX_REASON_CHARS } from './json-bounds.js';
export { unsafePathSegment } from './path-ids.js';
export type { ApiErrorDetails } from './errors.js';
export {
  DEAL_LIST,
  DEAL_READ,
  EVENT_LIST,
  TICKET_LIST,
  TICKET_READ,
  amountSchema,
  companySchema,
  contactRefSchema,
  dealContactSchema,
  dealSchema,
  eventSchema,
  messageSchema,
  pipelineSchema,
  slaSchema,
  stageSchema,
  ticketSchema,
  ticketWithMessagesSchema,
  userRefSchema,
} from './schemas.js';
export { RETRY_TABLE } from './retry-policy.js';
