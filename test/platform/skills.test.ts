import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseSkillFrontMatter } from '../../src/platform/skills.js';

describe('SKILL.md front matter', () => {
  it('reads name, description and an optional version', () => {
    const parsed = parseSkillFrontMatter('---\nname: pdf-tools\ndescription: "Work with PDFs."\nversion: 1.2.0\n---\n# Body');
    assert.deepEqual(parsed, { ok: true, value: { name: 'pdf-tools', description: 'Work with PDFs.', version: '1.2.0' } });
  });

  it('refuses a file without front matter', () => {
    const parsed = parseSkillFrontMatter('# just markdown');
    assert.equal(parsed.ok, false);
  });

  it('names every missing field', () => {
    const parsed = parseSkillFrontMatter('---\nother: 1\n---\n');
    assert.equal(parsed.ok, false);
    if (!parsed.ok) assert.deepEqual(parsed.problems.map((p) => p.code), ['skill.name', 'skill.description']);
  });
});
