import type { AppsBackend, AppView, AppWithSecret } from './apps-backend.ts';
import { CommandError } from './errors.ts';
import { DEFAULT_SOURCE, type Target } from './target.ts';

const TIMEOUT_MS = 30_000;

/** The API answered with its error envelope; the message is the API's own. */
export class ApiError extends CommandError {
  override name = 'ApiError';
  readonly status: number;

  constructor(status: number, code: string, message: string, hint?: string) {
    super(message, hint ? { code, hint } : { code });
    this.status = status;
  }
}

/** No HTTP answer at all; `refused` means nothing listens there, so nothing was sent. */
export class ApiUnreachable extends CommandError {
  override name = 'ApiUnreachable';
  readonly refused: boolean;

  constructor(message: string, refused: boolean) {
    super(message, { hint: 'Check that the API runs at that address, or fix --url / GATEHOUSE_URL.' });
    this.refused = refused;
  }
}

/** Client of the admin API (`/admin/v1`), authenticated with the bearer admin token. */
export class AdminClient implements AppsBackend {
  readonly #target: Target;

  constructor(target: Target) {
    this.#target = target;
  }

  /** Every app: the admin API answers a page at a time, followed here until the last. */
  async list(): Promise<{ apps: AppView[] }> {
    const apps: AppView[] = [];
    let cursor: string | null = null;
    do {
      const page: { apps: AppView[]; next_cursor: string | null } = await this.#call(
        'GET',
        `/admin/v1/apps?limit=500${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      apps.push(...page.apps);
      cursor = page.next_cursor;
    } while (cursor);
    return { apps };
  }

  show(appKey: string): Promise<AppView> {
    return this.#call('GET', appPath(appKey));
  }

  create(settings: Record<string, unknown>): Promise<AppWithSecret> {
    return this.#call('POST', '/admin/v1/apps', settings);
  }

  update(appKey: string, patch: Record<string, unknown>): Promise<AppView> {
    return this.#call('PATCH', appPath(appKey), patch);
  }

  rotateSecret(appKey: string, graceSeconds: number | undefined): Promise<AppWithSecret> {
    const body = graceSeconds === undefined ? {} : { grace_seconds: graceSeconds };
    return this.#call('POST', `${appPath(appKey)}/rotate-secret`, body);
  }

  rotateKey(appKey: string, graceSeconds: number | undefined): Promise<AppView> {
    const body = graceSeconds === undefined ? {} : { grace_seconds: graceSeconds };
    return this.#call('POST', `${appPath(appKey)}/rotate-key`, body);
  }

  setDisabled(appKey: string, disabled: boolean): Promise<AppView> {
    return this.#call('POST', `${appPath(appKey)}/${disabled ? 'disable' : 'enable'}`);
  }

  /** Any admin route, for commands beyond apps (`gatehouse standby-key`). */
  request<T>(method: string, path: string, body?: object): Promise<T> {
    return this.#call(method, path, body);
  }

  async #call<T>(method: string, path: string, body?: object): Promise<T> {
    const { url, adminToken } = this.#target;
    const headers: Record<string, string> = { accept: 'application/json' };
    if (adminToken) headers.authorization = `Bearer ${adminToken}`;
    if (body) headers['content-type'] = 'application/json';
    let res: Response;
    try {
      res = await fetch(url + path, {
        method,
        headers,
        body: body ? JSON.stringify(body) : null,
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (err) {
      const reason = networkReason(err);
      if (
        reason === 'ECONNREFUSED' &&
        this.#target.urlSource === DEFAULT_SOURCE &&
        !this.#target.fallbackAllowed
      ) {
        throw noServerFound(this.#target);
      }
      throw new ApiUnreachable(
        `Cannot reach the Gatehouse API at ${url}: ${REASONS[reason] ?? reason}.`,
        reason === 'ECONNREFUSED',
      );
    }
    const answer = await readJson(res);
    if (answer?.code === 0 && 'data' in answer) return answer.data as T;
    if (answer?.code === -1 && typeof answer.error === 'string' && typeof answer.message === 'string') {
      throw new ApiError(res.status, answer.error, answer.message, this.#hint(answer.error));
    }
    throw new ApiError(
      res.status,
      'unexpected_answer',
      `${method} ${url + path} answered HTTP ${res.status} without a Gatehouse envelope: is this a Gatehouse API?`,
    );
  }

  /** For a refused admin token: where the token came from, or where one would have been found. */
  #hint(code: string): string | undefined {
    if (code !== 'unauthorized') return undefined;
    const { tokenSource, dataDir } = this.#target;
    if (tokenSource) return `The admin token came from ${tokenSource}.`;
    const file = dataDir
      ? `${dataDir}/admin-token`
      : 'DATA_DIR/admin-token (no data folder was found from this folder upwards; set DATA_DIR)';
    return `No admin token was found: pass --admin-token, set GATEHOUSE_ADMIN_TOKEN, or run where the server's ${file} is found.`;
  }
}

const REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
};

function appPath(appKey: string): string {
  return `/admin/v1/apps/${encodeURIComponent(appKey)}`;
}

async function readJson(res: Response): Promise<Record<string, unknown> | undefined> {
  try {
    const parsed: unknown = JSON.parse(await res.text());
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The system error code under fetch's "fetch failed" (also inside Happy Eyeballs' AggregateError). */
function networkReason(err: unknown): string {
  const cause = (err as { cause?: { code?: string; errors?: { code?: string }[]; message?: string } }).cause;
  if (cause?.code) return cause.code;
  const codes = new Set(cause?.errors?.map((e) => e.code));
  if (codes.size === 1) return [...codes][0] ?? 'network error';
  if ((err as Error).name === 'TimeoutError') return `no answer within ${TIMEOUT_MS / 1000} s`;
  return cause?.message ?? (err as Error).message;
}

/** Nothing answers at the default address and nothing said where else to look: say so, touch nothing. */
export function noServerFound(target: Target): CommandError {
  return new CommandError(
    `No Gatehouse server found: nothing answers at ${target.url} (the default) and ${target.searched}.`,
    {
      hint:
        "Start one with 'npm start' in the Gatehouse checkout (the command finds it from any folder inside), " +
        'or pass --url URL (or set GATEHOUSE_URL). To work on a database with no server, set DATA_DIR or ' +
        'DATABASE_URL; no database was opened or created.',
    },
  );
}
