import type { AppView, AppWithSecret } from './apps-backend.ts';

/** The answer's data object as JSON, the `--json` form of every command. */
export function json(data: unknown): string {
  return `${JSON.stringify(data, null, 2)}\n`;
}

/** Left-aligned columns separated by two spaces, with a header row. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return `${[line(header), ...rows.map(line)].join('\n')}\n`;
}

/** Label/value lines, labels padded to one column. */
export function fields(pairs: [string, string][], indent = '  '): string {
  const width = Math.max(...pairs.map(([label]) => label.length));
  return pairs.map(([label, value]) => `${indent}${label.padEnd(width)}  ${value}\n`).join('');
}

const count = (n: number) => n.toLocaleString('en-US');

/** The plan as it applies now: `pro`, or `free (pro subscription expired ...)`. */
export function planLabel(app: AppView): string {
  if (app.effective_plan === app.plan) return app.plan;
  return `${app.effective_plan} (${app.plan} subscription expired)`;
}

export function appTable(apps: AppView[]): string {
  if (apps.length === 0) return 'No apps yet. Create one with: gatehouse app create --name NAME\n';
  return table(
    ['APP KEY', 'NAME', 'PLAN', 'MONTHLY QUOTA', 'STATUS', 'CREATED'],
    apps.map((a) => [
      a.app_key,
      a.name,
      planLabel(a),
      count(a.monthly_quota),
      a.disabled ? 'disabled' : 'enabled',
      a.created_at.slice(0, 19).replace('T', ' '),
    ]),
  );
}

/** Every setting of one app; the secret only when `app_secret` is present (create and rotate). */
export function appSummary(app: AppView | AppWithSecret): string {
  const pairs: [string, string][] = [['App key', app.app_key]];
  if ('app_secret' in app) pairs.push(['App secret', app.app_secret]);
  pairs.push(
    ['Name', app.name],
    ['Plan', planLabel(app)],
    [
      'Monthly quota',
      `${count(app.monthly_quota)} (${app.overage_allowed ? 'overage allowed' : 'no overage'})`,
    ],
    ['Subscription until', app.subscription_expires_at ?? 'no end date'],
    ['Server token', app.server_token_required ? 'required' : 'not required'],
    ['Test mode', app.test_mode ? 'on' : 'off'],
    ['Pass token TTL', `${app.pass_token_ttl} s`],
    ['Client IP policy', app.client_ip_policy],
    ['Allowed domains', app.allowed_domains.length ? app.allowed_domains.join(', ') : 'any'],
    [
      'Risk policy',
      Object.keys(app.risk_policy as object).length
        ? JSON.stringify(app.risk_policy)
        : 'default (scored per visitor)',
    ],
    ['Status', app.disabled ? 'disabled (its credentials answer app_disabled)' : 'enabled'],
    [
      'Previous secret',
      app.secret_rotation_grace_until ? `still valid until ${app.secret_rotation_grace_until}` : 'none',
    ],
    [
      'Previous key',
      app.previous_app_key
        ? `${app.previous_app_key}, still valid until ${app.key_rotation_grace_until}`
        : 'none',
    ],
    ['Created', app.created_at],
  );
  return fields(pairs);
}

export const SECRET_WARNING =
  'gatehouse: the app secret is shown only this once; store it now (a lost secret can only be replaced with `gatehouse app rotate-secret`).\n';

/** A value as one shell word, whatever it holds. */
const shellWord = (value: string) => `'${value.replaceAll("'", `'\\''`)}'`;

/**
 * `--export`: lines a POSIX shell evaluates (`eval "$(gatehouse app create ... --export)"`) to hold the
 * new credentials, and the API's URL when an API answered, for the next commands and curl lines.
 */
export function shellExports(app: AppWithSecret, apiUrl: string | undefined): string {
  const lines = [
    `export APP_KEY=${shellWord(app.app_key)}`,
    `export APP_SECRET=${shellWord(app.app_secret)}`,
  ];
  if (apiUrl) lines.push(`export GATEHOUSE_URL=${shellWord(apiUrl)}`);
  return `${lines.join('\n')}\n`;
}

/**
 * Test mode gives every visitor the invisible tier before the risk policy is read: a policy that sends
 * visitors to a challenge (--force-challenge included) has no effect until test mode is off.
 */
export function testModeNote(app: AppView): string | undefined {
  if (!app.test_mode) return undefined;
  const policy = app.risk_policy as { invisible_below?: unknown };
  if (policy.invisible_below !== 0) return undefined;
  return "gatehouse: note: test mode is on, so every visitor still gets the invisible tier and this risk policy's challenges are not shown; turn it off with --no-test-mode.\n";
}
