/**
 * The egress policy as a person writes it: the options of createHttpBridge and the CLI's `--policy FILE`
 * JSON, validated with every problem named. Secrets in the vault are never quoted in a message.
 */
import { ValidationError, type Problem } from '../errors.js';
import { parseAllowEntry, type AllowEntry } from './allowlist.js';
import { canonicalOrigin, usableCredentialHeaders, type VaultCredential } from './credentials.js';

export type PrivateDestinations = 'deny' | 'allow';

export interface EgressPolicy {
  /** Allowlist entries: `host`, `host:port`, `*.domain`, `*.domain:port`, IP literals. */
  allow: string[];
  /** Origins (`https://host[:port]`) whose vault credential the function may use. */
  grants: string[];
  /** `allow` only for local development and tests: lets requests reach private and reserved addresses. */
  privateDestinations?: PrivateDestinations;
}

/** The `--policy FILE` document: the policy plus the vault for the call. */
export interface EgressPolicyFile extends EgressPolicy {
  vault: VaultCredential[];
}

export interface CompiledPolicy {
  allow: AllowEntry[];
  grants: Set<string>;
  privateDestinations: PrivateDestinations;
}

/** Validates a policy; throws ValidationError (codes `egress.policy.*`) listing every problem. */
export function compilePolicy(policy: EgressPolicy): CompiledPolicy {
  const problems: Problem[] = [];
  const allow: AllowEntry[] = [];
  for (const entry of policy.allow ?? []) {
    const parsed = typeof entry === 'string' ? parseAllowEntry(entry) : { problem: 'an allow entry must be a string' };
    if ('problem' in parsed) problems.push({ code: 'egress.policy.allow', message: parsed.problem });
    else allow.push(parsed);
  }
  const grants = new Set<string>();
  for (const grant of policy.grants ?? []) {
    const origin = typeof grant === 'string' ? canonicalOrigin(grant) : null;
    if (origin === null) {
      problems.push({
        code: 'egress.policy.grant',
        message: `grant ${JSON.stringify(grant)} is not an https origin like "https://api.example.com" (no path)`,
      });
    } else grants.add(origin);
  }
  const privateDestinations = policy.privateDestinations ?? 'deny';
  if (privateDestinations !== 'deny' && privateDestinations !== 'allow') {
    problems.push({ code: 'egress.policy.private_destinations', message: 'privateDestinations must be "deny" or "allow"' });
  }
  if (problems.length > 0) throw new ValidationError(problems);
  return { allow, grants, privateDestinations };
}

/** Checks vault entries' shape; problems name the entry by index and origin, never by value. */
export function vaultProblems(vault: unknown): Problem[] {
  if (!Array.isArray(vault)) return [{ code: 'egress.policy.vault', message: 'vault must be an array of {origin, headers}' }];
  const problems: Problem[] = [];
  vault.forEach((raw, index) => {
    const where = `vault[${index}]`;
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
      problems.push({ code: 'egress.policy.vault', message: `${where} must be an object {origin, headers}` });
      return;
    }
    const entry = raw as Record<string, unknown>;
    const unknown = Object.keys(entry).filter((k) => k !== 'origin' && k !== 'headers');
    if (unknown.length > 0) {
      problems.push({ code: 'egress.policy.vault', message: `${where} has unknown field(s) ${unknown.join(', ')}` });
    }
    if (typeof entry.origin !== 'string' || canonicalOrigin(entry.origin) === null) {
      problems.push({ code: 'egress.policy.vault', message: `${where}.origin must be an https origin like "https://api.example.com"` });
    }
    const headers = entry.headers;
    const headersOk =
      typeof headers === 'object' && headers !== null && !Array.isArray(headers) &&
      usableCredentialHeaders({ origin: '', headers: headers as Record<string, string> }) !== null;
    if (!headersOk) {
      problems.push({
        code: 'egress.policy.vault',
        message: `${where}.headers must be a non-empty object of valid header names to string values (values are not shown)`,
      });
    }
  });
  return problems;
}

const POLICY_FILE_FIELDS = new Set(['allow', 'grants', 'vault', 'privateDestinations']);

/**
 * Parses the CLI's `--policy FILE` JSON (text or an already parsed value):
 * `{"allow": [...], "grants": [...], "vault": [{"origin", "headers"}], "privateDestinations": "deny"}`.
 * Every field is optional. Throws ValidationError naming each problem.
 */
export function parseEgressPolicyFile(json: string | unknown): EgressPolicyFile {
  let value: unknown = json;
  if (typeof json === 'string') {
    try {
      value = JSON.parse(json);
    } catch (error) {
      if (!(error instanceof SyntaxError)) throw error; // expected: not JSON
      throw new ValidationError([{ code: 'egress.policy.json', message: 'the policy file is not valid JSON' }]);
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ValidationError([{ code: 'egress.policy.json', message: 'the policy file must hold a JSON object' }]);
  }
  const doc = value as Record<string, unknown>;
  const problems: Problem[] = [];
  for (const key of Object.keys(doc)) {
    if (!POLICY_FILE_FIELDS.has(key)) {
      problems.push({
        code: 'egress.policy.field',
        message: `unknown policy field ${JSON.stringify(key)}; expected allow, grants, vault, privateDestinations`,
      });
    }
  }
  const stringList = (key: 'allow' | 'grants'): string[] => {
    const list = doc[key] ?? [];
    if (!Array.isArray(list) || !list.every((x) => typeof x === 'string')) {
      problems.push({ code: `egress.policy.${key === 'allow' ? 'allow' : 'grant'}`, message: `${key} must be an array of strings` });
      return [];
    }
    return list;
  };
  const policy: EgressPolicyFile = {
    allow: stringList('allow'),
    grants: stringList('grants'),
    vault: [],
    privateDestinations: (doc.privateDestinations ?? 'deny') as PrivateDestinations,
  };
  const vaultIssues = vaultProblems(doc.vault ?? []);
  problems.push(...vaultIssues);
  if (vaultIssues.length === 0) {
    policy.vault = (doc.vault as VaultCredential[] | undefined ?? []).map((c) => ({ origin: c.origin, headers: { ...c.headers } }));
  }
  try {
    compilePolicy(policy);
  } catch (error) {
    if (error instanceof ValidationError) problems.push(...error.problems);
    else throw error;
  }
  if (problems.length > 0) throw new ValidationError(problems);
  return policy;
}
