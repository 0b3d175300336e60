import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseManifest, validateManifest } from '../../src/package/manifest.js';

const valid = { abi: 1, name: 'weather-lookup', description: 'Looks up the weather for a city.' };
const codesOf = (value: unknown): string[] => validateManifest(value).problems.map((p) => p.code);

describe('subako-package.json', () => {
  test('abi 1, a name and a description make a manifest; version is optional', () => {
    assert.deepEqual(validateManifest(valid), { manifest: valid, problems: [] });
    const versioned = { ...valid, version: '1.2.0-beta.1+build.5' };
    assert.deepEqual(validateManifest(versioned).manifest, versioned);
    assert.deepEqual(validateManifest({ ...valid, $schema: 'https://example.com/s.json' }).manifest, valid);
  });

  test('text that is not JSON, or JSON that is not an object, is manifest.json', () => {
    const broken = parseManifest('{"abi": 1,');
    assert.deepEqual(broken.problems.map((p) => p.code), ['manifest.json']);
    assert.equal(broken.manifest, null);
    for (const value of [null, [], 'text', 3]) assert.deepEqual(codesOf(value), ['manifest.json']);
  });

  test('a byte order mark before the JSON is tolerated', () => {
    assert.deepEqual(parseManifest(`\uFEFF${JSON.stringify(valid)}`).manifest, valid);
  });

  test('abi other than the number 1 is manifest.abi', () => {
    for (const abi of [undefined, 2, '1', 1.5, null]) {
      const result = validateManifest({ ...valid, abi });
      assert.deepEqual(result.problems.map((p) => p.code), ['manifest.abi'], String(abi));
      assert.match(result.problems[0].message, /1/);
    }
  });

  test('a name that does not match ^[a-z0-9][a-z0-9_-]{0,63}$ is manifest.name', () => {
    for (const name of [undefined, '', 'Weather', '-lead', 'has space', 'a'.repeat(65), 'dot.ted', 7]) {
      assert.deepEqual(codesOf({ ...valid, name }), ['manifest.name'], String(name));
    }
    for (const name of ['a', '0day', 'snake_case-and-kebab', 'a'.repeat(64)]) {
      assert.deepEqual(codesOf({ ...valid, name }), [], name);
    }
  });

  test('a missing, empty or overlong description is manifest.description', () => {
    for (const description of [undefined, '', '   ', 42, 'x'.repeat(4097)]) {
      assert.deepEqual(codesOf({ ...valid, description }), ['manifest.description'], String(description).slice(0, 10));
    }
  });

  test('a version that is not a semantic version of at most 64 characters is manifest.version', () => {
    for (const version of ['1', '1.2', 'v1.2.3', '01.2.3', '1.2.3-', 1, `1.2.3-${'a'.repeat(60)}`]) {
      assert.deepEqual(codesOf({ ...valid, version }), ['manifest.version'], String(version));
    }
    for (const version of ['0.0.0', '10.20.30', '1.0.0-rc.1', '1.0.0+20250101']) {
      assert.deepEqual(codesOf({ ...valid, version }), [], version);
    }
  });

  test('an unknown field is manifest.unknown-field; "tools" says where tools come from', () => {
    const result = validateManifest({ ...valid, descripton: 'typo', tools: [] });
    assert.deepEqual(result.problems.map((p) => p.code), ['manifest.unknown-field', 'manifest.unknown-field']);
    assert.match(result.problems[0].message, /"descripton"/);
    assert.match(result.problems[1].message, /tools\/list/);
    assert.equal(result.manifest, null);
  });

  test('every problem is reported at once', () => {
    assert.deepEqual(codesOf({ abi: 2, name: 'Bad Name', version: 'x', extra: 1 }).sort(), [
      'manifest.abi', 'manifest.description', 'manifest.name', 'manifest.unknown-field', 'manifest.version',
    ]);
  });
});
