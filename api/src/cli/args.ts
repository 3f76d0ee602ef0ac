import { type ParseArgsConfig, parseArgs } from 'node:util';
import { UsageError } from './errors.ts';

export type OptionSpec = NonNullable<ParseArgsConfig['options']>;

/** Options every command takes, before or after its words. */
export const GLOBAL_OPTIONS = {
  url: { type: 'string' },
  'admin-token': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies OptionSpec;

export const GLOBAL_HELP = `Options for every command:
  --url URL              the admin API (default: $GATEHOUSE_URL, else the server started on the data
                         folder (DATA_DIR, else the checkout's found from here upwards: its
                         server.json), else http://127.0.0.1:8080)
  --admin-token TOKEN    (default: $GATEHOUSE_ADMIN_TOKEN, else the file DATA_DIR/admin-token)
  --json                 print the API's data object as JSON instead of a summary
  -h, --help             show help
`;

/**
 * Takes the first word that is not an option (`app`, then `create`) out of the arguments; global
 * options may come before it, and `--url X`-style values are not mistaken for the word.
 */
export function shiftWord(argv: readonly string[]): { word: string | undefined; rest: string[] } {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') return { word: argv[i + 1], rest: [...argv.slice(0, i), ...argv.slice(i + 2)] };
    if (!arg.startsWith('-')) return { word: arg, rest: [...argv.slice(0, i), ...argv.slice(i + 1)] };
    const name = arg.replace(/^--?/, '');
    const spec = GLOBAL_OPTIONS[name as keyof typeof GLOBAL_OPTIONS];
    if (spec?.type === 'string') i++;
  }
  return { word: undefined, rest: [...argv] };
}

/** parseArgs with the global options added, every error turned into one sentence naming the command. */
export function parseCommandArgs<O extends OptionSpec>(argv: string[], options: O, command: string) {
  try {
    return parseArgs({
      args: argv,
      options: { ...GLOBAL_OPTIONS, ...options },
      allowPositionals: true,
      allowNegative: true,
      strict: true,
    });
  } catch (err) {
    const e = err as { code?: string; message: string };
    const quoted = /'(-[^' ]+)/.exec(e.message)?.[1];
    if (e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && quoted) {
      throw new UsageError(`Unknown option ${quoted} for '${command}'; see '${command} --help'.`);
    }
    if (e.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && quoted && /argument missing/.test(e.message)) {
      throw new UsageError(`${quoted} needs a value ('${command} --help' lists the options).`);
    }
    throw new UsageError(`${e.message} ('${command} --help' lists the options).`);
  }
}

/** Checks that exactly the named positional arguments were given. */
export function expectPositionals(given: string[], names: readonly string[], usage: string): string[] {
  if (given.length < names.length) {
    throw new UsageError(`Missing ${names[given.length]}: usage is '${usage}'.`);
  }
  if (given.length > names.length) {
    throw new UsageError(`Unexpected argument '${given[names.length]}': usage is '${usage}'.`);
  }
  return given;
}

/** A non-negative whole number given as a flag's value. */
export function wholeNumber(flag: string, raw: string): number {
  if (!/^\d{1,10}$/.test(raw)) throw new UsageError(`${flag} must be a whole number, got '${raw}'.`);
  return Number(raw);
}

/** One of a fixed list of words given as a flag's value. */
export function oneOf<T extends string>(flag: string, raw: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new UsageError(`${flag} must be one of ${allowed.join(', ')}; got '${raw}'.`);
  }
  return raw as T;
}
