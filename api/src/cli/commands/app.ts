import { PLAN_NAMES } from '../../apps/plans.ts';
import type { AppsBackend, AppView, AppWithSecret } from '../apps-backend.ts';
import {
  expectPositionals,
  GLOBAL_HELP,
  type OptionSpec,
  oneOf,
  parseCommandArgs,
  shiftWord,
  wholeNumber,
} from '../args.ts';
import { withApps } from '../backend.ts';
import type { CliContext, Command } from '../command.ts';
import { UsageError } from '../errors.ts';
import { appSummary, appTable, json, SECRET_WARNING, shellExports, testModeNote } from '../output.ts';
import { FORCED_CHALLENGES, type ForcedChallenge, forcePolicy, readPolicyFlag } from '../risk-flags.ts';
import { resolveTarget } from '../target.ts';

/** A checked request: what to ask the backend, and how to show the answer to a person. */
interface Prepared {
  call(apps: AppsBackend): Promise<object>;
  render(data: object): string;
  /** The answer carries a secret made just now: warn that it is shown once. */
  showsSecret?: boolean;
}

interface Subcommand {
  name: string;
  summary: string;
  positionals: readonly string[];
  options: OptionSpec;
  /** Extra lines for the subcommand's help, after its usage line. */
  help?: string;
  /** Checks the arguments, throwing UsageError before anything is contacted; `cwd` for @file values. */
  prepare(values: Values, positionals: string[], cwd: string): Prepared;
}

type Values = Record<string, string | boolean | (string | boolean)[] | undefined>;

const SETTINGS_OPTIONS = {
  name: { type: 'string' },
  plan: { type: 'string' },
  quota: { type: 'string' },
  overage: { type: 'boolean' },
  'server-token-required': { type: 'boolean' },
  'test-mode': { type: 'boolean' },
  'pass-token-ttl': { type: 'string' },
  'client-ip-policy': { type: 'string' },
  'subscription-expires': { type: 'string' },
  'allowed-domains': { type: 'string' },
  'risk-policy': { type: 'string' },
  'force-challenge': { type: 'string' },
} as const satisfies OptionSpec;

const SETTINGS_HELP = `Settings:
  --name NAME                      display name, 1 to 100 characters
  --plan ${PLAN_NAMES.join('|').padEnd(25)} billing plan (default free)
  --quota N|plan                   monthly verifications, overriding the plan's; 'plan' removes the override
  --overage, --no-overage          allow or refuse verifications past the quota (default: the plan's rule)
  --server-token-required, --no-server-token-required
                                   challenges need a server token from /v1/server/challenge/issue
  --test-mode, --no-test-mode      always the invisible tier with trivial difficulty, for integrators' CI
  --pass-token-ttl SECONDS         pass token lifetime, 30 to 3600 (default 300)
  --client-ip-policy report|reject what a client_ip mismatch at validation does (default report)
  --subscription-expires ISO|none  when a paid plan lapses to free: 2030-01-31 or 2030-01-31T12:00:00Z
  --allowed-domains D1,D2|any      page domains the widget may run on (default any)
  --risk-policy JSON|@FILE|default the risk policy (thresholds, challenge kinds, limits); default removes it
  --force-challenge KIND           every visitor gets one challenge: ${FORCED_CHALLENGES.filter((k) => k !== 'off').join('|')};
                                   off returns to scoring (other policy fields are kept)
`;

/** The request body for create and update, from the settings flags that were given. */
function settingsFromFlags(v: Values, cwd: string): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  const text = (flag: string) => v[flag] as string | undefined;
  if (text('name') !== undefined) body.name = text('name');
  if (text('plan') !== undefined) body.plan = oneOf('--plan', text('plan')!, PLAN_NAMES);
  const quota = text('quota');
  if (quota !== undefined) body.monthly_quota = quota === 'plan' ? null : wholeNumber('--quota', quota);
  if (v.overage !== undefined) body.overage_allowed = v.overage;
  if (v['server-token-required'] !== undefined) body.server_token_required = v['server-token-required'];
  if (v['test-mode'] !== undefined) body.test_mode = v['test-mode'];
  const ttl = text('pass-token-ttl');
  if (ttl !== undefined) body.pass_token_ttl = wholeNumber('--pass-token-ttl', ttl);
  const policy = text('client-ip-policy');
  if (policy !== undefined) body.client_ip_policy = oneOf('--client-ip-policy', policy, ['report', 'reject']);
  const expires = text('subscription-expires');
  if (expires !== undefined) body.subscription_expires_at = expiry(expires);
  const domains = text('allowed-domains');
  if (domains !== undefined) {
    body.allowed_domains =
      domains === 'any'
        ? []
        : domains
            .split(',')
            .map((d) => d.trim())
            .filter(Boolean);
  }
  const riskPolicy = text('risk-policy');
  if (riskPolicy !== undefined) body.risk_policy = readPolicyFlag(riskPolicy, cwd);
  return body;
}

/** `--force-challenge KIND`, checked; undefined when not given. */
function forcedFlag(v: Values): ForcedChallenge | undefined {
  const raw = v['force-challenge'] as string | undefined;
  return raw === undefined ? undefined : oneOf('--force-challenge', raw, FORCED_CHALLENGES);
}

/** `none` clears the date; a bare date means midnight UTC; anything else goes to the API as written. */
function expiry(raw: string): string | null {
  if (raw === 'none') return null;
  if (/^\d{4}-\d{2}-\d{2}$/.test(raw)) return `${raw}T00:00:00Z`;
  return raw;
}

const EXPORT_OPTION = { export: { type: 'boolean' } } as const satisfies OptionSpec;
const EXPORT_HELP = `  --export                         print shell lines instead: export APP_KEY=... APP_SECRET=... and
                                   GATEHOUSE_URL=... (the API that answered), for eval "$(...)"
`;

const show = (data: object) => appSummary(data as Parameters<typeof appSummary>[0]);

const SUBCOMMANDS: Subcommand[] = [
  {
    name: 'create',
    summary: 'create an app; prints its key and its secret (shown only once)',
    positionals: [],
    options: { ...SETTINGS_OPTIONS, ...EXPORT_OPTION },
    help: `--name is required.\n\n${SETTINGS_HELP}${EXPORT_HELP}`,
    prepare(values, _positionals, cwd) {
      const body = settingsFromFlags(values, cwd);
      if (body.name === undefined) throw new UsageError("'gatehouse app create' needs --name NAME.");
      const forced = forcedFlag(values);
      if (forced) {
        body.risk_policy = forcePolicy((body.risk_policy as Record<string, unknown>) ?? {}, forced);
      }
      return {
        call: (apps) => apps.create(body),
        render: (data) => `Created app ${(data as { name: string }).name}.\n${show(data)}`,
        showsSecret: true,
      };
    },
  },
  {
    name: 'list',
    summary: 'list every app (never secrets)',
    positionals: [],
    options: {},
    prepare: () => ({
      call: (apps) => apps.list(),
      render: (data) => appTable((data as { apps: Parameters<typeof appTable>[0] }).apps),
    }),
  },
  {
    name: 'show',
    summary: "one app's settings (never its secret)",
    positionals: ['KEY'],
    options: {},
    prepare: (_values, [key]) => ({ call: (apps) => apps.show(key!), render: show }),
  },
  {
    name: 'update',
    summary: "change an app's settings; settings not given stay as they are",
    positionals: ['KEY'],
    options: SETTINGS_OPTIONS,
    help: SETTINGS_HELP,
    prepare(values, [key], cwd) {
      const patch = settingsFromFlags(values, cwd);
      const forced = forcedFlag(values);
      if (Object.keys(patch).length === 0 && !forced) {
        throw new UsageError(
          "Nothing to update: give at least one setting ('gatehouse app update --help' lists them).",
        );
      }
      return {
        async call(apps) {
          if (forced) {
            // Forcing a challenge changes the tier fields only: the rest of the stored policy stays.
            const base =
              (patch.risk_policy as Record<string, unknown> | undefined) ??
              ((await apps.show(key!)).risk_policy as Record<string, unknown>);
            patch.risk_policy = forcePolicy(base, forced);
          }
          return apps.update(key!, patch);
        },
        render: (data) => `Updated.\n${show(data)}`,
      };
    },
  },
  {
    name: 'rotate-secret',
    summary: 'issue a new secret; the old one keeps working for --grace seconds',
    positionals: ['KEY'],
    options: { grace: { type: 'string' }, ...EXPORT_OPTION },
    help: `  --grace SECONDS   how long the previous secret keeps working, 0 to 2592000 (default 86400, one day);
                    0 stops it at once\n${EXPORT_HELP}`,
    prepare(values, [key]) {
      const raw = values.grace as string | undefined;
      const grace = raw === undefined ? undefined : wholeNumber('--grace', raw);
      return {
        call: (apps) => apps.rotateSecret(key!, grace),
        render: (data) => `New secret issued.\n${show(data)}`,
        showsSecret: true,
      };
    },
  },
  {
    name: 'rotate-key',
    summary: 'issue a new public key; the old one keeps naming the app for --grace seconds',
    positionals: ['KEY'],
    options: { grace: { type: 'string' } },
    help: `  --grace SECONDS   how long the previous key keeps working (widgets, validation, standby), 0 to
                    2592000 (default 86400, one day); 0 stops it at once. Pass tokens already issued
                    stay valid. Refused for an app managed by a Kubernetes custom resource.\n`,
    prepare(values, [key]) {
      const raw = values.grace as string | undefined;
      const grace = raw === undefined ? undefined : wholeNumber('--grace', raw);
      return {
        call: (apps) => apps.rotateKey(key!, grace),
        render: (data) => `New key issued.\n${show(data)}`,
      };
    },
  },
  {
    name: 'disable',
    summary: 'stop an app at once: its credentials answer app_disabled',
    positionals: ['KEY'],
    options: {},
    prepare: (_values, [key]) => ({
      call: (apps) => apps.setDisabled(key!, true),
      render: (data) => `Disabled.\n${show(data)}`,
    }),
  },
  {
    name: 'enable',
    summary: 'let a disabled app work again',
    positionals: ['KEY'],
    options: {},
    prepare: (_values, [key]) => ({
      call: (apps) => apps.setDisabled(key!, false),
      render: (data) => `Enabled.\n${show(data)}`,
    }),
  },
];

const usageOf = (s: Subcommand) =>
  ['gatehouse app', s.name, ...s.positionals, Object.keys(s.options).length ? '[options]' : '', '[--json]']
    .filter(Boolean)
    .join(' ');

function appHelp(): string {
  const width = Math.max(...SUBCOMMANDS.map((s) => s.name.length));
  const lines = SUBCOMMANDS.map((s) => `  ${s.name.padEnd(width)}  ${s.summary}`);
  return `Usage: gatehouse app <subcommand> [options]\n\nApps and their keys:\n${lines.join('\n')}\n\nRun 'gatehouse app <subcommand> --help' for its options.\n\n${GLOBAL_HELP}`;
}

function subcommandHelp(s: Subcommand): string {
  return `Usage: ${usageOf(s)}\n\n${s.summary[0]!.toUpperCase()}${s.summary.slice(1)}.\n\n${s.help ? `${s.help}\n` : ''}${GLOBAL_HELP}`;
}

/** `gatehouse app ...`: apps and their keys, through the admin API. */
export const appCommand: Command = {
  name: 'app',
  summary: 'create, list, show, update, rotate-secret, rotate-key, disable and enable apps',
  async run(argv: string[], ctx: CliContext): Promise<number> {
    const { word, rest } = shiftWord(argv);
    if (word === undefined) {
      const asked = rest.includes('--help') || rest.includes('-h');
      (asked ? ctx.out : ctx.err)(appHelp());
      return asked ? 0 : 2;
    }
    const sub = SUBCOMMANDS.find((s) => s.name === word);
    if (!sub) {
      const names = SUBCOMMANDS.map((s) => s.name).join(', ');
      throw new UsageError(`Unknown subcommand 'app ${word}'; the subcommands are ${names}.`);
    }
    const { values, positionals } = parseCommandArgs(rest, sub.options, `gatehouse app ${sub.name}`);
    if (values.help) {
      ctx.out(subcommandHelp(sub));
      return 0;
    }
    const prepared = sub.prepare(
      values,
      expectPositionals(positionals, sub.positionals, usageOf(sub)),
      ctx.cwd,
    );
    if (values.export && values.json) throw new UsageError('--export and --json cannot be used together.');
    const target = resolveTarget(values as { url?: string; 'admin-token'?: string }, ctx.env, ctx.cwd);
    let direct = false;
    const data = await withApps(ctx, target, prepared.call, () => {
      direct = true;
    });
    if (values.export) {
      ctx.out(shellExports(data as AppWithSecret, direct ? undefined : target.url));
    } else {
      ctx.out(values.json ? json(data) : prepared.render(data));
    }
    if (prepared.showsSecret) ctx.err(SECRET_WARNING);
    const note = testModeNote(data as AppView);
    if (note) ctx.err(note);
    return 0;
  },
};
