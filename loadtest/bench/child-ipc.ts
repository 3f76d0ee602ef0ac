import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { performance } from 'node:perf_hooks';
import { summariseProfile } from './profile.ts';
import type { Command, ProfileSummary, Reply } from './protocol.ts';

type Handler = (command: Command) => Promise<unknown>;

/**
 * Serves the bench's commands in a child process: `cpu`, `loop` and profiling for every child, anything else by
 * `extra`. Answers each command with its id.
 */
export function serveCommands(extra: Handler, close: () => Promise<void>): void {
  let session: Session | undefined;
  async function handle(command: Command): Promise<unknown> {
    switch (command.type) {
      case 'cpu':
        return process.cpuUsage();
      case 'loop':
        return performance.eventLoopUtilization();
      case 'profile-start':
        session = new Session();
        session.connect();
        await session.post('Profiler.enable');
        await session.post('Profiler.setSamplingInterval', { interval: 200 });
        await session.post('Profiler.start');
        return null;
      case 'profile-stop': {
        if (!session) throw new Error('profiler not started');
        const { profile } = await session.post('Profiler.stop');
        session.disconnect();
        session = undefined;
        // The whole profile too, for Chrome DevTools or `node --cpu-prof`-style tools (BENCH_PROFILE_DIR).
        if (command.file) writeFileSync(command.file, JSON.stringify(profile));
        return summariseProfile(profile) satisfies ProfileSummary;
      }
      case 'close':
        await close();
        setImmediate(() => process.exit(0));
        return null;
      default:
        return extra(command);
    }
  }
  process.on('message', (command: Command) => {
    handle(command).then(
      (value) => process.send?.({ id: command.id, value } satisfies Reply),
      (error: unknown) => process.send?.({ id: command.id, error: String(error) } satisfies Reply),
    );
  });
  process.on('disconnect', () => process.exit(0));
}
