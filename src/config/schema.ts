import { Cron } from 'croner';
import { z } from 'zod';

/** `alternatives`: other accepted values, named first in the message (a union reports this member's refusal). */
const cronPattern = (what: string, alternatives = '') =>
  z.string().refine(
    (pattern) => {
      try {
        new Cron(pattern, { paused: true }).stop();
        return true;
      } catch {
        return false;
      }
    },
    { message: `must be ${alternatives}a croner pattern with seconds for ${what}, e.g. "*/30 * * * * *"` },
  );

const historySetting = z.union([
  z.literal('none'),
  z.literal('all'),
  z.iso.datetime({ offset: true }).describe('an ISO date-time'),
  z.iso.date(),
]);

/**
 * The one configuration schema (docs/design.md §3). Every key has its default here, and the
 * description doubles as the help text in errors and in config.example.json.
 */
export const configSchema = z
  .object({
    baseUrl: z
      .url({ protocol: /^https?$/, message: 'must be an http(s) URL such as "https://acme.example.com"' })
      .optional()
      .describe('the workspace base address; paths are appended as /api/v1/...'),
    apiKey: z
      .string()
      .min(1, 'must not be empty')
      .optional()
      .describe('sent as Authorization: Bearer <key>; prefer the WSMIRROR_API_KEY environment variable'),
    database: z
      .string()
      .min(1, 'must be a file path or a postgres:// URL')
      .default('./data/mirror.sqlite')
      .describe('a file path (SQLite) or a postgres:// URL'),
    schedule: z
      .union([z.literal('continuous'), cronPattern('the sync schedule', '"continuous" or ')], {
        error: 'must be "continuous" or a croner pattern with seconds for the sync schedule, e.g. "*/30 * * * * *"',
      })
      .default('*/30 * * * * *')
      .describe(
        'croner pattern (with seconds) for `run`, or "continuous": the next cycle starts as soon as one ends, at most every minPollIntervalMs, idle polls within a fifth of the request rate (docs/design.md §4.10)',
      ),
    minPollIntervalMs: z
      .number()
      .int()
      .min(100)
      .max(3_600_000)
      .default(500)
      .describe(
        'with schedule "continuous": the shortest time between the starts of two change-log reads; 500 ms keeps an idle poll (two requests) within 4 requests/s even with a generous ceiling',
      ),
    lookbackSeconds: z
      .number()
      .int()
      .min(0)
      .max(86_400)
      .default(300)
      .describe('how late an event may become visible and still be caught: a full window re-reads this much before the watermark'),
    tickOverlapSeconds: z
      .number()
      .int()
      .min(0)
      .max(86_400)
      .default(5)
      .describe(
        'events visible late by up to this are caught by the next cycle: a tick re-reads up to this much before the watermark, less once the log is idle (at most lookbackSeconds)',
      ),
    tickOverlapMinSeconds: z
      .number()
      .int()
      .min(0)
      .max(86_400)
      .default(1)
      .describe(
        'the part of tickOverlapSeconds (a larger value counts as tickOverlapSeconds) a busy tick re-reads even when it costs a change-log request of its own; the rest is read as far as the pages needed anyway reach, or whole for an hour after a window read an event that late',
      ),
    fullLookbackEverySeconds: z
      .number()
      .int()
      .min(0)
      .max(86_400)
      .default(1800)
      .describe(
        'how often a window re-reads the full lookback (0: every window); an event late by up to lookbackSeconds is caught within this plus one schedule period',
      ),
    pageSize: z.number().int().min(1).max(100).default(100).describe('limit for every list call (1..100)'),
    concurrency: z.number().int().min(1).max(64).default(8).describe('entity fetches in flight at once'),
    drainPlan: z
      .enum(['auto', 'list', 'record'])
      .default('auto')
      .describe(
        'how the drain re-reads dirty records: "auto" picks per drain whichever costs fewer requests, "list" pages the newest-first ticket and deal lists (GET /tickets/:id only where messages may have changed), "record" reads each record by id (docs/sync.md, "Drain")',
      ),
    maxRequestsPerSecond: z
      .union([z.number().positive().max(10_000), z.literal('auto')], { error: 'must be a number above 0 and at most 10000, or "auto"' })
      .default(10)
      .describe('client-side ceiling for all calls together, or "auto" to find the upstream allowance from 429s and rate-limit headers'),
    maxRequestsPerSecondCeiling: z
      .number()
      .positive()
      .max(10_000)
      .default(100)
      .describe('with maxRequestsPerSecond "auto": the hard ceiling the adaptive rate never exceeds'),
    requestTimeoutMs: z.number().int().min(100).max(600_000).default(30_000).describe('per request'),
    retry: z
      .object({
        maxAttempts: z.number().int().min(1).max(50).default(6).describe('attempts per request, the first included'),
        maxDelayMs: z.number().int().min(0).max(3_600_000).default(60_000).describe('longest wait between attempts'),
      })
      .strict()
      .default({ maxAttempts: 6, maxDelayMs: 60_000 }),
    maxResponseBytes: z
      .number()
      .int()
      .min(1024)
      .max(2_147_483_647)
      .default(33_554_432)
      .describe('a larger response body is refused unread (that record is quarantined, or the cycle fails); default 32 MiB'),
    stallTimeoutMs: z
      .number()
      .int()
      .min(1000)
      .max(86_400_000)
      .default(600_000)
      .describe(
        'a cycle that commits no page and no record for this long fails, and /healthz turns 503 while one runs that long (docs/sync.md, docs/operations.md)',
      ),
    reconcileSchedule: cronPattern('the nightly reconcile').default('0 0 3 * * *').describe('when `run` performs a `verify --repair`'),
    http: z
      .object({
        host: z.string().min(1).default('127.0.0.1').describe('health and metrics server address'),
        port: z.number().int().min(0).max(65_535).default(9464).describe('health and metrics port of `run` (0 disables)'),
        authToken: z
          .string()
          .min(16, 'must be at least 16 characters (e.g. the output of `openssl rand -hex 24`)')
          .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces (it travels in an HTTP header)')
          .optional()
          .describe(
            'none by default; when set, every endpoint of the http server but /healthz requires `Authorization: Bearer <token>`; prefer the WSMIRROR_HTTP_AUTH_TOKEN environment variable',
          ),
      })
      .strict()
      .default({ host: '127.0.0.1', port: 9464 }),
    logLevel: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info').describe('log level'),
    schema: z
      .string()
      .regex(/^[a-z_][a-z0-9_]{0,62}$/, 'must be a lower-case PostgreSQL identifier (letters, digits, _), e.g. "acme"')
      .default('public')
      .describe('PostgreSQL only: the schema that holds this mirror, so several workspaces share one database'),
    eventsRetentionDays: z
      .number()
      .int()
      .min(0)
      .max(36_500)
      .default(90)
      .refine((d) => d === 0 || d >= 2, 'must be 0 (keep every event) or at least 2 days, longer than the lookback')
      .describe(
        'change-log events older than this many days before the watermark are deleted after each cycle (0 keeps all); history tables keep what they derived',
      ),
    fileMode: z
      .string()
      .regex(/^0?[0-7]{3}$/, 'must be an octal file mode such as "0600"')
      .default('0600')
      .describe('SQLite: mode of the mirror and lock files wsmirror creates (the WAL follows the mirror)'),
    directoryMode: z
      .string()
      .regex(/^0?[0-7]{3}$/, 'must be an octal directory mode such as "0700"')
      .default('0700')
      .describe('SQLite: mode of the data directory when wsmirror creates it'),
    dailyWindowDays: z
      .number()
      .int()
      .min(1)
      .max(3660)
      .default(90)
      .describe(
        'days (UTC, today included) kept in rpt_ticket_daily and rpt_deal_daily: at most one row per record per day, so rows <= records x days (docs/schema.md, "Daily state")',
      ),
    history: historySetting.default('none').describe('backfill also copies the change log: "none", "all", or an ISO date to start from'),
  })
  .strict()
  .superRefine((c, ctx) => {
    if (c.tickOverlapSeconds > c.lookbackSeconds) {
      ctx.addIssue({
        code: 'custom',
        path: ['tickOverlapSeconds'],
        message: `must be at most lookbackSeconds (${c.lookbackSeconds}), since a full window re-reads the tick overlap too: lower tickOverlapSeconds or raise lookbackSeconds`,
      });
    }
  });

export type Config = Readonly<z.infer<typeof configSchema>>;
export type ConfigInput = z.input<typeof configSchema>;
