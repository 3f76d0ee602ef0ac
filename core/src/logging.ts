import pino, { type Logger } from 'pino';

/** `auto` (the default): readable lines when stdout is a terminal, JSON (one object a line) otherwise. */
export const LOG_FORMATS = ['auto', 'pretty', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export interface LoggerSettings {
  level: string;
  format?: LogFormat | undefined;
  /** Whether stdout is a terminal; `process.stdout.isTTY` unless a test says otherwise. */
  isTTY?: boolean | undefined;
}

/** Secrets that must never reach a log line, whichever object carries them. */
const REDACT = { paths: ['*.app_secret', '*.secret', '*.headers', 'req.headers'], censor: '[redacted]' };

/** Whether these settings print readable lines rather than JSON. */
export function prettyLogs(settings: LoggerSettings): boolean {
  if (settings.format === 'pretty') return true;
  if (settings.format === 'json') return false;
  return settings.isTTY ?? process.stdout.isTTY === true;
}

/**
 * The process's logger, shared by the API and the standby. Neither form writes on the request's path:
 * JSON goes through an asynchronous destination (flushed at exit), readable lines through pino-pretty in
 * pino's worker thread, so a slow terminal or pipe never holds a request up.
 */
export function createLogger(settings: LoggerSettings): Logger {
  const options = { level: settings.level, redact: REDACT };
  if (prettyLogs(settings)) {
    return pino({
      ...options,
      transport: {
        target: 'pino-pretty',
        options: { destination: 1, colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' },
      },
    });
  }
  // Lines are gathered into writes of WRITE_BYTES (and flushed at least every FLUSH_MS, and at exit by pino):
  // one write per request line was a syscall per request on the event loop, ~10% of a validation's CPU
  // (issue 14, "logging off the hot path"), and writes of 4 KiB still were ~4%.
  const destination = pino.destination({ dest: 1, sync: false, minLength: WRITE_BYTES });
  const timer = setInterval(() => {
    try {
      destination.flush();
    } catch {
      clearInterval(timer); // destroyed: the process is ending
    }
  }, FLUSH_MS).unref();
  return pino(options, destination);
}

/** Just under sonic-boom's largest single write (16 KiB), which a minimum length must stay below. */
const WRITE_BYTES = 15 * 1024;
/** The longest a JSON log line waits in the buffer on a quiet server. */
const FLUSH_MS = 250;
