/**
 * The console's only way to the server: the admin API, signed in by the session cookie the server set at
 * sign-in (HttpOnly: this script never sees it). The admin token is sent once, to sign in, and kept
 * nowhere. Requests that change something carry the session's CSRF token, held in memory only and asked
 * for again after a reload.
 */
let csrfToken: string | null = null;
const signedOutListeners = new Set<() => void>();

/** An error answer of the API: its code and message, shown to the person as they are. */
export class ApiError extends Error {
  readonly code: string;
  readonly status: number;

  constructor(code: string, message: string, status: number) {
    super(message);
    this.code = code;
    this.status = status;
  }
}

// biome-ignore lint/suspicious/noExplicitAny: answers are read field by field by the views.
export type Json = any;

async function request(method: string, path: string, body?: unknown): Promise<Json> {
  const res = await fetch(path, {
    method,
    credentials: 'same-origin',
    headers: {
      accept: 'application/json',
      ...(method !== 'GET' && csrfToken ? { 'x-csrf-token': csrfToken } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const answer = (await res.json().catch(() => ({}))) as Json;
  if (!res.ok || answer.code !== 0) {
    throw new ApiError(answer.error ?? 'http_error', answer.message ?? `HTTP ${res.status}`, res.status);
  }
  return answer.data;
}

export const session = {
  /** Whether the cookie holds a live session (and its CSRF token, kept for the requests that follow). */
  async resume(): Promise<boolean> {
    try {
      csrfToken = (await request('GET', '/admin/v1/session')).csrf_token;
      return true;
    } catch {
      csrfToken = null;
      return false;
    }
  },
  async signIn(adminToken: string): Promise<void> {
    csrfToken = (await request('POST', '/admin/v1/session', { admin_token: adminToken })).csrf_token;
  },
  async signOut(): Promise<void> {
    try {
      await request('DELETE', '/admin/v1/session');
    } finally {
      csrfToken = null;
    }
  },
  /** Called when the server says the session is over (expired, signed out elsewhere, token changed). */
  onSignedOut(listener: () => void): () => void {
    signedOutListeners.add(listener);
    return () => signedOutListeners.delete(listener);
  },
};

/** A request to the admin API; a 401 means the session is over, and the console goes back to sign-in. */
export async function api(method: string, path: string, body?: unknown): Promise<Json> {
  try {
    return await request(method, path, body);
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) {
      csrfToken = null;
      for (const listener of signedOutListeners) listener();
    }
    throw error;
  }
}

/** One page of apps (`cursor`: the previous page's next_cursor), as `GET /admin/v1/apps` pages them. */
export function appsPage(cursor?: string | null): Promise<{ apps: Json[]; next_cursor: string | null }> {
  return api('GET', `/admin/v1/apps${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ''}`);
}

/** Every app, page after page: for the views that name apps by key. */
export async function allApps(): Promise<Json[]> {
  const all: Json[] = [];
  let cursor: string | null = null;
  do {
    const page = await appsPage(cursor);
    all.push(...page.apps);
    cursor = page.next_cursor;
  } while (cursor);
  return all;
}

/** A handler for a failed read that shows its message (a view never leaves a rejection unhandled). */
export const showError =
  (set: (message: string) => void) =>
  (error: unknown): void =>
    set(error instanceof Error ? error.message : String(error));
