import type { StandbyKeyInfo } from '../../standby/keyring.ts';
import { AdminClient } from '../admin-client.ts';
import { expectPositionals, GLOBAL_HELP, type OptionSpec, parseCommandArgs, shiftWord } from '../args.ts';
import type { CliContext, Command } from '../command.ts';
import { UsageError } from '../errors.ts';
import { json, table } from '../output.ts';
import { resolveTarget } from '../target.ts';

const HELP = `Usage: gatehouse standby-key <subcommand> [options]

The standby keyring: one offline_ signing key per standby region (docs/failover.md, "Standby keys").
  list                   every key: id, region, state (active, retired, revoked), dates; never the key
  rotate --region NAME   a new active key for the region; the old one verifies only what it minted
  revoke KID             refuse the key's tokens everywhere at once; an active key is replaced
  credential --region NAME
                         the sync credential for that region's standby (STANDBY_SYNC_TOKEN there):
                         it reads that region's snapshot only; a secret, shown once

Each needs the running API (the admin token, as for 'gatehouse app').

${GLOBAL_HELP}`;

const OPTIONS = { region: { type: 'string' } } as const satisfies OptionSpec;

const when = (iso: string | null) => (iso ? iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : '-');
const render = (keys: StandbyKeyInfo[]) =>
  table(
    ['KID', 'REGION', 'STATE', 'CREATED', 'RETIRED', 'REVOKED'],
    keys.map((k) => [k.kid, k.region, k.status, when(k.created_at), when(k.retired_at), when(k.revoked_at)]),
  );

/** `gatehouse standby-key ...`: list, rotate and revoke the standby regions' signing keys. */
export const standbyKeyCommand: Command = {
  name: 'standby-key',
  summary: "list, rotate and revoke the standby regions' signing keys",
  async run(argv: string[], ctx: CliContext): Promise<number> {
    const { word, rest } = shiftWord(argv);
    if (word === undefined || !['list', 'rotate', 'revoke', 'credential'].includes(word)) {
      if (word !== undefined) {
        throw new UsageError(
          `Unknown subcommand 'standby-key ${word}'; the subcommands are list, rotate, revoke, credential.`,
        );
      }
      const asked = rest.includes('--help') || rest.includes('-h');
      (asked ? ctx.out : ctx.err)(HELP);
      return asked ? 0 : 2;
    }
    const { values, positionals } = parseCommandArgs(rest, OPTIONS, `gatehouse standby-key ${word}`);
    if (values.help) {
      ctx.out(HELP);
      return 0;
    }
    const [kid] = expectPositionals(
      positionals,
      word === 'revoke' ? ['KID'] : [],
      `gatehouse standby-key ${word}${word === 'revoke' ? ' KID' : ''}`,
    );
    const region = values.region as string | undefined;
    const needsRegion = word === 'rotate' || word === 'credential';
    if (!needsRegion && region !== undefined)
      throw new UsageError(`--region is for 'gatehouse standby-key rotate' and 'credential' only.`);
    if (needsRegion && !region)
      throw new UsageError(`Missing --region: usage is 'gatehouse standby-key ${word} --region NAME'.`);
    const client = new AdminClient(
      resolveTarget(values as { url?: string; 'admin-token'?: string }, ctx.env, ctx.cwd),
    );
    let data: object;
    let text: string;
    if (word === 'list') {
      const { keys } = await client.request<{ keys: StandbyKeyInfo[] }>('GET', '/admin/v1/standby-keys');
      data = { keys };
      text = render(keys);
    } else if (word === 'rotate') {
      const key = await client.request<StandbyKeyInfo>('POST', '/admin/v1/standby-keys/rotate', { region });
      data = key;
      text = `Rotated: ${key.kid} is region ${key.region}'s active key from its standby's next snapshot.\n${render([key])}`;
    } else if (word === 'credential') {
      const answer = await client.request<{ region: string; sync_token: string }>(
        'POST',
        '/admin/v1/standby-keys/sync-credential',
        { region },
      );
      data = answer;
      text = `STANDBY_SYNC_TOKEN=${answer.sync_token}\n`;
      ctx.err(
        `Region ${answer.region}'s standby credential: it reads that region's snapshot only. Keep it secret.\n`,
      );
    } else {
      const key = await client.request<StandbyKeyInfo>(
        'POST',
        `/admin/v1/standby-keys/${encodeURIComponent(kid!)}/revoke`,
      );
      data = key;
      text = `Revoked: every checker refuses ${key.kid}'s tokens now.\n${render([key])}`;
    }
    ctx.out(values.json ? json(data) : text);
    return 0;
  },
};
