import { GatehouseError } from '@gatehouse/node';
import { solveChallenge } from '@gatehouse/node/headless';
import { noServerFound } from './admin-client.ts';
import { parseCommandArgs } from './args.ts';
import type { CliContext, Command } from './command.ts';
import { CommandError, UsageError } from './errors.ts';
import { json } from './output.ts';
import { DEFAULT_SOURCE, DEFAULT_URL, resolveTarget } from './target.ts';

const OPTIONS = {
  'app-key': { type: 'string' },
  action: { type: 'string' },
  'server-token': { type: 'string' },
  platform: { type: 'string' },
  referer: { type: 'string' },
} as const;

const HELP = `Usage: gatehouse solve --app-key KEY --action ACTION [--server-token T] [--url URL] [--json]

Solves a challenge headlessly, as the web widget would (init, proof-of-work, submit), and prints the pass
token: the whole token alone on stdout, or with --json {"pass_token", "tier", "challenge_id"}. For CI and
load tests: it passes only where the app's policy gives the invisible tier (a test-mode app, or a risk
policy such as {"invisible_below": 101, "image_below": 101}); an image tier fails with exit code 1.
When the app's quota is exhausted it prints the dg_ token it got (tier "degraded"), which never validates.

  --app-key KEY          the app's public key (ak_...); no secret is needed
  --action ACTION        the scene the token is bound to (login, register, pay...)
  --server-token T       an sct_ token, for apps that require one
  --platform NAME        reported as captcha_args.platform (default web)
  --referer URL          the page URL a browser would send (apps with allowed domains)
  --url URL              the main API (default: $GATEHOUSE_URL, else the server on DATA_DIR, else ${DEFAULT_URL})
  --json                 print {"pass_token", "tier", "challenge_id"}
  -h, --help             show help
`;

/** `gatehouse solve`: the headless client of `@gatehouse/node` as a command. */
export const solveCommand: Command = {
  name: 'solve',
  summary: 'solve an invisible-tier challenge headlessly and print the pass token (CI, load tests)',
  async run(argv: string[], ctx: CliContext): Promise<number> {
    const { values, positionals } = parseCommandArgs(argv, OPTIONS, 'gatehouse solve');
    if (values.help) {
      ctx.out(HELP);
      return 0;
    }
    if (positionals.length)
      throw new UsageError(`Unexpected argument '${positionals[0]}' for 'gatehouse solve'.`);
    const appKey = values['app-key'];
    const action = values.action;
    if (!appKey) throw new UsageError("'gatehouse solve' needs --app-key KEY (the app's public key).");
    if (!action) throw new UsageError("'gatehouse solve' needs --action ACTION (login, register...).");
    const target = resolveTarget({ url: values.url }, ctx.env, ctx.cwd);
    const baseUrl = target.url;
    let solved: Awaited<ReturnType<typeof solveChallenge>>;
    try {
      solved = await solveChallenge({
        baseUrl,
        appKey,
        action,
        // A command that prints a token must not print an unverifiable co_ one and exit 0.
        clientOnlyFallback: false,
        ...(values['server-token'] ? { serverToken: values['server-token'] } : {}),
        ...(values.platform ? { platform: values.platform } : {}),
        ...(values.referer ? { referer: values.referer } : {}),
      });
    } catch (err) {
      if (
        err instanceof GatehouseError &&
        err.code === 'network_error' &&
        target.urlSource === DEFAULT_SOURCE
      )
        throw noServerFound(target);
      if (err instanceof GatehouseError)
        throw new CommandError(err.message.replace(/^Gatehouse: /, ''), { code: err.code });
      throw err;
    }
    if (values.json) {
      ctx.out(json({ pass_token: solved.passToken, tier: solved.tier, challenge_id: solved.challengeId }));
    } else {
      ctx.out(`${solved.passToken}\n`);
    }
    ctx.err(
      solved.degraded
        ? "gatehouse: the app's quota is exhausted: this is a dg_ token, which validates as degraded, never valid.\n"
        : `gatehouse: solved ${solved.challengeId} (invisible tier, proof-of-work ${solved.solveMs} ms); the pass token is valid for ${solved.expiresIn} s, once.\n`,
    );
    return 0;
  },
};
