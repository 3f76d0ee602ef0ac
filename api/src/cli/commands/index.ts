import type { Command } from '../command.ts';
import { solveCommand } from '../solve.ts';
import { appCommand } from './app.ts';
import { standbyKeyCommand } from './standby-key.ts';

/** Every top-level command. A new one (`gatehouse solve ...`) is one module and one line here. */
export const COMMANDS: readonly Command[] = [appCommand, standbyKeyCommand, solveCommand];
