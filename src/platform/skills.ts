/**
 * Skills: versioned bundles whose root holds `SKILL.md`, with YAML front matter naming the skill
 * (`name`, `description`, optionally `version`). Mounted read-only at /skills/<name> for the agent's functions.
 */
import { createHash, randomBytes } from 'node:crypto';
import { access, cp, mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ValidationError, type Problem } from '../errors.js';
import { bundleDigest, readBundle, type BundleLimits, type ContentStore } from '../package/index.js';
import { ConflictError, InUseError, NotFoundError } from './errors.js';
import { nowIso } from './ids.js';
import { VERSION_TEXT } from './packages.js';
import type { AgentStore, Page, PageRequest, SkillRecord, SkillStore } from './store/index.js';

export const SKILL_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

export interface SkillFrontMatter {
  name: string;
  description: string;
  version: string | null;
}

/**
 * Reads the front matter of a SKILL.md: the block between a first line `---` and the next `---`, of
 * `key: value` lines (values optionally quoted). Pure; returns problems instead of throwing.
 */
export function parseSkillFrontMatter(text: string): { ok: true; value: SkillFrontMatter } | { ok: false; problems: Problem[] } {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  if (lines[0]?.trim() !== '---') {
    return { ok: false, problems: [{ code: 'skill.front_matter', message: 'SKILL.md must start with a "---" front matter block' }] };
  }
  const end = lines.findIndex((line, i) => i > 0 && line.trim() === '---');
  if (end === -1) return { ok: false, problems: [{ code: 'skill.front_matter', message: 'SKILL.md front matter has no closing "---"' }] };
  const fields = new Map<string, string>();
  for (const line of lines.slice(1, end)) {
    const match = /^([A-Za-z_][A-Za-z0-9_-]*)\s*:\s*(.*)$/.exec(line);
    if (!match) continue; // nested YAML is allowed but not read
    let value = match[2].trim();
    if ((value.startsWith('"') && value.endsWith('"')) || (value.startsWith("'") && value.endsWith("'"))) value = value.slice(1, -1);
    fields.set(match[1], value);
  }
  const problems: Problem[] = [];
  const name = fields.get('name') ?? '';
  const description = fields.get('description') ?? '';
  const version = fields.get('version') ?? null;
  if (!SKILL_NAME.test(name)) problems.push({ code: 'skill.name', message: `front matter "name" must be 1-64 characters of a-z, 0-9, "_" and "-" (got ${JSON.stringify(name)})` });
  if (description.length === 0 || description.length > 1024) problems.push({ code: 'skill.description', message: 'front matter "description" must be 1-1024 characters' });
  if (version !== null && !VERSION_TEXT.test(version)) problems.push({ code: 'skill.version', message: `front matter "version" ${JSON.stringify(version)} is not a usable version` });
  return problems.length > 0 ? { ok: false, problems } : { ok: true, value: { name, description, version } };
}

export class SkillService {
  constructor(private readonly store: SkillStore & Pick<AgentStore, 'agentVersionsUsingSkill'>, private readonly blobs: ContentStore, private readonly limits: BundleLimits) {}

  async upload(archive: Uint8Array): Promise<{ record: SkillRecord; created: boolean }> {
    const contents = await readBundle(archive, this.limits);
    const skillMd = contents.files.find((f) => f.path === 'SKILL.md');
    if (!skillMd) throw new ValidationError([{ code: 'skill.missing', message: 'a skill bundle holds SKILL.md at its root' }]);
    const parsed = parseSkillFrontMatter(skillMd.data.toString('utf8'));
    if (!parsed.ok) throw new ValidationError(parsed.problems);
    const { name, description, version } = parsed.value;
    const digest = bundleDigest(archive);
    if (version !== null) {
      const existing = await this.store.getSkill(name, version);
      if (existing) {
        if (existing.digest === digest) return { record: existing, created: false };
        throw new ConflictError(`skill ${name}@${version} already exists with other contents; versions are immutable`, 'version_exists');
      }
    }
    await this.blobs.put(archive, contents);
    // Unversioned (null): the store numbers it inside the transaction that adds it.
    const record = await this.store.addSkill({ name, version, description, digest, createdAt: nowIso() });
    return { record, created: true };
  }

  async get(name: string, version: string): Promise<SkillRecord> {
    const rec = version === 'latest' ? await this.store.latestSkill(name) : await this.store.getSkill(name, version);
    if (!rec) throw new NotFoundError(`skill ${name}@${version}`);
    return rec;
  }

  list(page: PageRequest): Promise<Page<SkillRecord>> {
    return this.store.listSkills(page);
  }

  async delete(name: string, version: string): Promise<void> {
    const rec = await this.get(name, version);
    const users = await this.store.agentVersionsUsingSkill(rec.name, rec.version);
    if (users.length > 0) throw new InUseError(`skill ${rec.name}@${rec.version} is used by agent versions ${users.slice(0, 5).join(', ')}`);
    await this.store.deleteSkill(rec.name, rec.version);
  }

  /** The unpacked skill directory. */
  dir(rec: SkillRecord): Promise<string> {
    return this.blobs.tree(rec.digest);
  }

  /**
   * A directory whose subdirectories are the given skills, by name (what the runtime mounts at /skills).
   * Assembled once per distinct set and reused; it appears complete, by rename, or not at all.
   */
  async mountDir(skills: readonly SkillRecord[]): Promise<string | undefined> {
    if (skills.length === 0) return undefined;
    const key = createHash('sha256').update(skills.map((s) => `${s.name}@${s.digest}`).sort().join('\n')).digest('hex');
    const dir = join(this.blobs.root, 'sets', key);
    if (await access(dir).then(() => true, () => false)) return dir;
    const staging = `${dir}.partial-${randomBytes(6).toString('hex')}`;
    await mkdir(staging, { recursive: true });
    try {
      for (const skill of skills) await cp(await this.dir(skill), join(staging, skill.name), { recursive: true });
      await rename(staging, dir);
    } catch (err) {
      await rm(staging, { recursive: true, force: true });
      if (!(await access(dir).then(() => true, () => false))) throw err;
    }
    return dir;
  }
}
