// The console's one way to the API: same origin, the API key from sessionStorage as a bearer header (never
// in a URL, never in localStorage). A 401 signs the person out.

const KEY = 'subako.apiKey';

export function apiKey(): string | null {
  return sessionStorage.getItem(KEY);
}

export function signIn(key: string): void {
  sessionStorage.setItem(KEY, key);
}

export function signOut(): void {
  sessionStorage.removeItem(KEY);
  window.dispatchEvent(new Event('subako:signed-out'));
}

export class ApiError extends Error {
  constructor(readonly status: number, readonly code: string, message: string, readonly problems: { code: string; message: string }[] = []) {
    super(message);
  }
}

export function authHeaders(key = apiKey()): Record<string, string> {
  return key ? { authorization: `Bearer ${key}` } : {};
}

async function failure(response: Response): Promise<ApiError> {
  let code = 'http_error';
  let message = `${response.status} ${response.statusText}`;
  let problems: { code: string; message: string }[] = [];
  try {
    const body = await response.json();
    if (body?.error) {
      code = String(body.error.code);
      message = String(body.error.message);
      if (Array.isArray(body.error.problems)) problems = body.error.problems;
    }
  } catch {
    // not JSON: the status line says it
  }
  if (response.status === 401) signOut();
  return new ApiError(response.status, code, message, problems);
}

export async function api<T = unknown>(method: string, path: string, body?: unknown, key = apiKey()): Promise<T> {
  const headers: Record<string, string> = { ...authHeaders(key) };
  let payload: BodyInit | undefined;
  if (body instanceof Blob || body instanceof ArrayBuffer) {
    payload = body;
    headers['content-type'] = 'application/gzip';
  } else if (body !== undefined) {
    payload = JSON.stringify(body);
    headers['content-type'] = 'application/json';
  }
  const response = await fetch(path, { method, headers, body: payload, credentials: 'omit', cache: 'no-store' });
  if (!response.ok) throw await failure(response);
  if (response.status === 204) return undefined as T;
  return (await response.json()) as T;
}

export async function apiBytes(path: string): Promise<Blob> {
  const response = await fetch(path, { headers: authHeaders(), credentials: 'omit', cache: 'no-store' });
  if (!response.ok) throw await failure(response);
  return response.blob();
}

/** Query strings from a record, leaving out empty values. */
export function query(params: Record<string, string | undefined>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value) search.set(name, value);
  const text = search.toString();
  return text ? `?${text}` : '';
}

// The API's bodies, typed from the schemas the server declares them with (src/server/api/): the router
// checks bodies against them and the OpenAPI document describes them. Type-only: nothing of src/ is bundled.
export type {
  AgentCallView, AgentInput, ApprovalDecided, ApprovalDecisionInput, ApprovalView, CallStatsRowView, CallStatsView, AgentSpecView, AgentVersionView, AgentView, CallAnswer, CallInput, CallOutcome, CallResult, CallView,
  CreatedSessionView, CredentialInput, CredentialPayload, CredentialView, EgressView, FileEntry, FileListing, HeldApprovalView,
  PackageSummaryView, PackageTool, PackageView, Page, SessionInput, SessionTool, SessionTools, SessionView, UserInput, UserView, ConnectionView, DisconnectedView, VaultInput, VaultView,
} from '../../src/server/api/index.js';
import type { CallOutcome } from '../../src/server/api/index.js';

/** Every outcome, for the filter: `satisfies` refuses one the API does not have, ALL_OUTCOMES_LISTED one it lacks. */
export const OUTCOMES = ['running', 'ok', 'tool_error', 'crash', 'cancelled', 'invalid_arguments', 'denied', 'input_required', 'unknown'] as const satisfies readonly CallOutcome[];
export const ALL_OUTCOMES_LISTED: [Exclude<CallOutcome, (typeof OUTCOMES)[number]>] extends [never] ? true : false = true;
