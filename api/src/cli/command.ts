/** What every command gets: where to write, the environment it reads, the folder it runs in. */
export interface CliContext {
  out(text: string): void;
  err(text: string): void;
  env: NodeJS.ProcessEnv;
  cwd: string;
}

/** A top-level command (`gatehouse app ...`): one module each, listed in `commands/index.ts`. */
export interface Command {
  name: string;
  /** One line for `gatehouse --help`. */
  summary: string;
  /** Runs with the arguments after the command's name; resolves to the exit code. */
  run(argv: string[], ctx: CliContext): Promise<number>;
}

/** The context of a real run: this process's streams, environment and working directory. */
export function processContext(): CliContext {
  return {
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
    env: process.env,
    cwd: process.cwd(),
  };
}
