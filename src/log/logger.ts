import { Writable } from 'node:stream';
import pino, { type Logger } from 'pino';
import pretty from 'pino-pretty';
import { REDACTED, type SecretRedactor } from '../util/redact.js';

export type { Logger } from 'pino';

export interface LoggerOptions {
  /** Default 'info'. */
  level?: string;
  /** Scrubs every finished line of the secrets it holds (the API key, passwords, tokens). Default: none. */
  redactor?: SecretRedactor;
  /** Default: pretty when stderr is a TTY, JSON lines otherwise. */
  pretty?: boolean;
  /** Default: process.stderr, so stdout stays clean for `--json` output. */
  destination?: NodeJS.WritableStream;
}

/**
 * pino's path redaction only covers keys it is told about; an API key can also hide in an error
 * message or a URL. So every finished line is also scrubbed for the literal secret values.
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const target = options.destination ?? process.stderr;
  const scrubbed = options.redactor === undefined ? target : scrubbingStream(target, options.redactor);
  const usePretty = options.pretty ?? Boolean((process.stderr as NodeJS.WriteStream).isTTY);
  const stream = usePretty
    ? pretty({ destination: scrubbed, colorize: true, sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' })
    : scrubbed;
  return pino(
    {
      level: options.level ?? 'info',
      // pino's default base: `pid` and `hostname` on every line (docs/operations.md, "Logs"), so two
      // daemons' lines on one host, or replicas' in one collector, can be told apart.
      redact: {
        paths: ['apiKey', '*.apiKey', 'config.apiKey', 'headers.authorization', '*.headers.authorization', 'authorization'],
        censor: REDACTED,
      },
    },
    stream,
  );
}

function scrubbingStream(target: NodeJS.WritableStream, redactor: SecretRedactor): Writable {
  return new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      target.write(redactor.redact(typeof chunk === 'string' ? chunk : chunk.toString('utf8')));
      callback();
    },
  });
}

/** A logger that writes nothing, for library use and tests. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
