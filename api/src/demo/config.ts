import { z } from 'zod';

/** The demo site's settings, from the environment (the main API's are in `config.ts`). */
const schema = z.object({
  DEMO_HOST: z.string().default('127.0.0.1'),
  DEMO_PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  DEMO_API_URL: z
    .url({ protocol: /^https?$/, error: 'DEMO_API_URL must be an http:// or https:// URL' })
    .optional()
    .or(z.literal('').transform(() => undefined)),
});

export interface DemoConfig {
  host: string;
  port: number;
  /** The API's URL as the browser reaches it (the widget script and challenge calls); default: where it listens. */
  publicApiUrl: string | undefined;
}

/** Parses the demo's environment once; throws one sentence per bad key. */
export function loadDemoConfig(env: NodeJS.ProcessEnv = process.env): DemoConfig {
  const result = schema.safeParse(env);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new Error(`Invalid demo configuration:\n  ${lines.join('\n  ')}`);
  }
  const e = result.data;
  return { host: e.DEMO_HOST, port: e.DEMO_PORT, publicApiUrl: e.DEMO_API_URL?.replace(/\/+$/, '') };
}
