/** /v1/packages and /v1/skills: bundles in, immutable versions out. */
import type { Route } from '../route.js';
import { ERROR_SCHEMA, PACKAGE_SCHEMA, PAGE_QUERY, SKILL_SCHEMA, pageOf } from '../schemas.js';
import { mapPage, packageView, pageRequest, skillView } from '../views.js';

export const BUNDLE_CONTENT_TYPES = ['application/gzip', 'application/x-gzip', 'application/x-tar+gzip', 'application/octet-stream'];

export function packageRoutes(maxBundleBytes: number): Route[] {
  const bundleBody = (what: string) => ({
    kind: 'binary' as const, contentTypes: BUNDLE_CONTENT_TYPES, maxBytes: maxBundleBytes,
    description: `A .tar.gz of the ${what} directory, as \`subako pack <dir>\` makes it.`,
  });
  const error = (description: string) => ({ description, schema: ERROR_SCHEMA });
  return [
    {
      method: 'POST', path: '/v1/packages', operationId: 'uploadPackage', tag: 'packages', auth: 'api_key',
      summary: 'Upload a package bundle: checks and discovery run; their problems come back as the error.',
      body: bundleBody('package'),
      responses: {
        201: { description: 'Stored as a new version.', schema: PACKAGE_SCHEMA },
        200: { description: 'The same bytes were already stored under this version.', schema: PACKAGE_SCHEMA },
        400: error('The bundle is unsafe or unreadable.'), 409: error('The version exists with other contents.'),
        413: error('The bundle is too large.'), 422: error('The package failed its checks or discovery.'),
      },
      async handler({ platform, body }) {
        const { record, created } = await platform.packages.upload(body as Buffer);
        return { status: created ? 201 : 200, body: packageView(record) };
      },
    },
    {
      method: 'GET', path: '/v1/packages', operationId: 'listPackages', tag: 'packages', auth: 'api_key',
      summary: 'List package versions, by name then version order.', query: PAGE_QUERY,
      responses: { 200: { description: 'A page of packages.', schema: pageOf(PACKAGE_SCHEMA) } },
      async handler({ platform, query }) {
        return { status: 200, body: mapPage(await platform.packages.list(pageRequest(query)), packageView) };
      },
    },
    {
      method: 'GET', path: '/v1/packages/{name}/versions/{version}', operationId: 'getPackage', tag: 'packages', auth: 'api_key',
      summary: 'Get a package version ("latest" for the newest) with its tools and their schemas.',
      responses: { 200: { description: 'The package version.', schema: PACKAGE_SCHEMA }, 404: error('No such package version.') },
      async handler({ platform, params }) {
        return { status: 200, body: packageView(await platform.packages.get(params.name, params.version)) };
      },
    },
    {
      method: 'DELETE', path: '/v1/packages/{name}/versions/{version}', operationId: 'deletePackage', tag: 'packages', auth: 'api_key',
      summary: 'Delete a package version; refused while an agent version uses it.',
      responses: { 204: { description: 'Deleted.' }, 404: error('No such package version.'), 409: error('An agent version uses it.') },
      async handler({ platform, params }) {
        await platform.packages.delete(params.name, params.version);
        return { status: 204 };
      },
    },
    {
      method: 'POST', path: '/v1/skills', operationId: 'uploadSkill', tag: 'skills', auth: 'api_key',
      summary: 'Upload a skill bundle (SKILL.md with name and description front matter at its root).',
      body: bundleBody('skill'),
      responses: {
        201: { description: 'Stored as a new version.', schema: SKILL_SCHEMA },
        200: { description: 'The same bytes were already stored under this version.', schema: SKILL_SCHEMA },
        400: error('The bundle is unsafe or unreadable.'), 409: error('The version exists with other contents.'),
        413: error('The bundle is too large.'), 422: error('SKILL.md is missing or its front matter is incomplete.'),
      },
      async handler({ platform, body }) {
        const { record, created } = await platform.skills.upload(body as Buffer);
        return { status: created ? 201 : 200, body: skillView(record) };
      },
    },
    {
      method: 'GET', path: '/v1/skills', operationId: 'listSkills', tag: 'skills', auth: 'api_key',
      summary: 'List skill versions.', query: PAGE_QUERY,
      responses: { 200: { description: 'A page of skills.', schema: pageOf(SKILL_SCHEMA) } },
      async handler({ platform, query }) {
        return { status: 200, body: mapPage(await platform.skills.list(pageRequest(query)), skillView) };
      },
    },
    {
      method: 'GET', path: '/v1/skills/{name}/versions/{version}', operationId: 'getSkill', tag: 'skills', auth: 'api_key',
      summary: 'Get a skill version ("latest" for the newest).',
      responses: { 200: { description: 'The skill version.', schema: SKILL_SCHEMA }, 404: error('No such skill version.') },
      async handler({ platform, params }) {
        return { status: 200, body: skillView(await platform.skills.get(params.name, params.version)) };
      },
    },
    {
      method: 'DELETE', path: '/v1/skills/{name}/versions/{version}', operationId: 'deleteSkill', tag: 'skills', auth: 'api_key',
      summary: 'Delete a skill version; refused while an agent version uses it.',
      responses: { 204: { description: 'Deleted.' }, 404: error('No such skill version.'), 409: error('An agent version uses it.') },
      async handler({ platform, params }) {
        await platform.skills.delete(params.name, params.version);
        return { status: 204 };
      },
    },
  ];
}
