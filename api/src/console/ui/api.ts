/** The console's only way to the server: the admin API with the admin token as a bearer header. */
const TOKEN_KEY = 'gatehouse.console.adminToken';

export const session = {
  token: (): string | null => sessionStorage.getItem(TOKEN_KEY),
  signIn: (token: string) => sessionStorage.setItem(TOKEN_KEY, token),
  signOut: () => sessionStorage.removeItem(TOKEN_KEY),
};

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

export async function api(
  method: string,
  path: string,
  body?: unknown,
  token = session.token(),
): Promise<Json> {
  const res = await fetch(path, {
    method,
    headers: {
      accept: 'application/json',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
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
