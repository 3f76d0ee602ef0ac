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

/** The readable line's message: the request line's fields (and a `path`, `ms` or `error` elsewhere) after it. */
const PRETTY_MESSAGE =
  '{msg}{if method} {method}{end}{if path} {path}{end}{if status} {status}{end}{if ms} {ms} ms{end}{if error} {error}{end}';

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
        options: {
          destination: 1,
          colorize: true,
          translateTime: 'SYS:HH:MM:ss.l',
          // One line an entry: a request reads `request GET /v1/validate 200 3.1 ms`, other fields follow
          // as JSON on the same line (an error's stack excepted). The request id stays in the JSON form.
          singleLine: true,
          messageFormat: PRETTY_MESSAGE,
          ignore: 'pid,hostname,reqId,method,path,status,ms,error',
        },
      },
    });
  }
  // Lines are gathered into writes of WRITE_BYTES (and flushed at least every FLUSH_MS, and at exit by pino):
  // one write per request line would be a syscall per request on the event loop, and small writes still
  // cost a share of a cheap request's CPU: logging stays off the hot path.
  const destination = pino.destination({ dest: 1, sync: false, minLength: WRITE_BYTES });
  const stream = gathered(destination);
  const timer = setInterval(() => {
    try {
      stream.flush();
    } catch {
      clearInterval(timer); // destroyed: the process is ending
    }
  }, FLUSH_MS).unref();
  return pino(options, stream);
}

type Destination = ReturnType<typeof pino.destination>;

/** The gathered lines of every JSON logger, handed to their destinations before pino flushes those at exit. */
const pending = new Set<() => void>();
let exitHooked = false;

/**
 * Lines gathered in an array and handed to the destination WRITE_BYTES at a time. sonic-boom appends each
 * line to its pending string and takes that string's byte length on every write (a flattened copy of the
 * whole pending string per line); joined here, it does so once per batch. flush and flushSync hand over
 * what is gathered first, and so does the process's exit, before pino's own exit handler flushes the
 * destination.
 */
function gathered(destination: Destination) {
  let parts: string[] = [];
  let bytes = 0;
  const drain = () => {
    if (parts.length === 0) return;
    const chunk = parts.length === 1 ? parts[0]! : parts.join('');
    parts = [];
    bytes = 0;
    destination.write(chunk);
  };
  pending.add(drain);
  destination.once('close', () => pending.delete(drain));
  if (!exitHooked) {
    exitHooked = true;
    process.prependListener('exit', () => {
      for (const each of pending) {
        try {
          each();
        } catch {} // a destroyed destination: nothing more can be written
      }
    });
  }
  return {
    write(line: string): boolean {
      parts.push(line);
      bytes += line.length;
      if (bytes >= WRITE_BYTES) drain();
      return true;
    },
    flush(callback?: (error?: Error) => void): void {
      drain();
      destination.flush(callback);
    },
    flushSync(): void {
      drain();
      destination.flushSync();
    },
    end(): void {
      drain();
      destination.end();
    },
  };
}

/** Just under sonic-boom's largest single write (16 KiB), which a minimum length must stay below. */
const WRITE_BYTES = 15 * 1024;
/** The longest a JSON log line waits in the buffer on a quiet server. */
const FLUSH_MS = 250;
