import { GatehouseError } from '@gatehouse/core/errors';
import { GLOBAL_HELP, shiftWord } from './args.ts';
import { type CliContext, processContext } from './command.ts';
import { COMMANDS } from './commands/index.ts';
import { CommandError, UsageError } from './errors.ts';

function help(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  const lines = COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`);
  return `Usage: gatehouse <command> [options]

Manage a Gatehouse verification service through its admin API. Run from any folder of the checkout, it
finds the server \`npm start\` runs there. When no --url is given and nothing listens at the local API's
address, the command opens the database itself (DATABASE_URL, else the embedded database in
DATA_DIR/pgdata) and says so on stderr: only one that exists or that DATA_DIR or DATABASE_URL names.

Commands:
${lines.join('\n')}

Run 'gatehouse <command> --help' for its subcommands and options.

${GLOBAL_HELP}
Exit codes: 0 done, 1 the API or the database refused, 2 the command was called wrongly.
`;
}

/**
 * Runs `gatehouse` with these arguments and resolves to its exit code: 0 done, 1 refused by the API or
 * the database (its message on stderr), 2 a usage mistake (one sentence on stderr).
 */
export async function main(argv: string[], ctx: CliContext = processContext()): Promise<number> {
  try {
    let { word, rest } = shiftWord(argv);
    if (word === 'help') {
      // `gatehouse help app create` is `gatehouse app create --help`.
      ({ word, rest } = shiftWord(rest));
      rest.push('--help');
    }
    if (word === undefined) {
      const asked = rest.includes('--help') || rest.includes('-h');
      (asked ? ctx.out : ctx.err)(help());
      return asked ? 0 : 2;
    }
    const command = COMMANDS.find((c) => c.name === word);
    if (!command) {
      const names = COMMANDS.map((c) => c.name).join(', ');
      throw new UsageError(`Unknown command '${word}'; the commands are ${names} ('gatehouse --help').`);
    }
    return await command.run(rest, ctx);
  } catch (err) {
    return report(err, ctx);
  }
}

function report(err: unknown, ctx: CliContext): number {
  if (err instanceof UsageError) {
    ctx.err(`gatehouse: ${err.message}\n`);
    return 2;
  }
  if (err instanceof GatehouseError) {
    // Raised by the same validation as the API's when working on the database directly.
    ctx.err(`gatehouse: ${err.message} (${err.code})\n`);
    return 1;
  }
  if (err instanceof CommandError) {
    ctx.err(
      `gatehouse: ${err.message}${err.code ? ` (${err.code})` : ''}${err.hint ? ` ${err.hint}` : ''}\n`,
    );
    return 1;
  }
  ctx.err(`gatehouse: unexpected error: ${err instanceof Error ? err.message : String(err)}\n`);
  return 1;
}
