/** /v1/vaults and their credentials: write-only secrets, sealed at rest. */
import { route, type Route } from '../route.js';
import { CredentialInput, CredentialView, VaultInput, VaultView, pageOf } from '../api/index.js';
import { PAGE_QUERY, errorResponse as error } from '../schemas.js';
import { mapPage, pageRequest, vaultView } from '../views.js';

export function vaultRoutes(): Route[] {
  return [
    route({
      method: 'POST', path: '/v1/vaults', operationId: 'createVault', tag: 'vaults', auth: 'api_key',
      summary: 'Create a vault.', body: { kind: 'json', schema: VaultInput },
      responses: { 201: { description: 'Created.', schema: VaultView }, 400: error('Bad input.') },
      async handler({ platform, body }) {
        return { status: 201, body: vaultView(await platform.vaults.createVault(body.name)) };
      },
    }),
    route({
      method: 'GET', path: '/v1/vaults', operationId: 'listVaults', tag: 'vaults', auth: 'api_key',
      summary: 'List vaults.', query: PAGE_QUERY,
      responses: { 200: { description: 'A page of vaults.', schema: pageOf(VaultView) } },
      async handler({ platform, query }) {
        return { status: 200, body: mapPage(await platform.vaults.listVaults(pageRequest(query)), vaultView) };
      },
    }),
    route({
      method: 'GET', path: '/v1/vaults/{id}', operationId: 'getVault', tag: 'vaults', auth: 'api_key',
      summary: 'Get a vault.',
      responses: { 200: { description: 'The vault.', schema: VaultView }, 404: error('No such vault.') },
      async handler({ platform, params }) {
        return { status: 200, body: vaultView(await platform.vaults.getVault(params.id)) };
      },
    }),
    route({
      method: 'DELETE', path: '/v1/vaults/{id}', operationId: 'deleteVault', tag: 'vaults', auth: 'api_key',
      summary: 'Delete a vault and its credentials; refused while an agent version or a session uses it.',
      responses: { 204: { description: 'Deleted.' }, 404: error('No such vault.'), 409: error('In use.') },
      async handler({ platform, params }) {
        await platform.vaults.deleteVault(params.id);
        return { status: 204 };
      },
    }),
    route({
      method: 'POST', path: '/v1/vaults/{id}/credentials', operationId: 'addCredential', tag: 'vaults', auth: 'api_key',
      summary: 'Add a credential for a target origin or server URL: static headers, a bearer token, or OAuth tokens with refresh. Never returned.',
      body: { kind: 'json', schema: CredentialInput, maxBytes: 64 * 1024 },
      responses: {
        201: { description: 'Stored (sealed); the answer shows no secret.', schema: CredentialView },
        400: error('Bad input.'), 404: error('No such vault.'), 422: error('Unusable target or payload.'),
      },
      async handler({ platform, params, body }) {
        return { status: 201, body: await platform.vaults.addCredential(params.id, body) };
      },
    }),
    route({
      method: 'GET', path: '/v1/vaults/{id}/credentials', operationId: 'listCredentials', tag: 'vaults', auth: 'api_key',
      summary: 'List a vault\'s credentials (targets and schemes only).', query: PAGE_QUERY,
      responses: { 200: { description: 'A page of credentials.', schema: pageOf(CredentialView) }, 404: error('No such vault.') },
      async handler({ platform, params, query }) {
        return { status: 200, body: await platform.vaults.listCredentials(params.id, pageRequest(query)) };
      },
    }),
    route({
      method: 'GET', path: '/v1/vaults/{id}/credentials/{credential_id}', operationId: 'getCredential', tag: 'vaults', auth: 'api_key',
      summary: 'Get a credential (target, scheme, expiry; never the secret).',
      responses: { 200: { description: 'The credential.', schema: CredentialView }, 404: error('No such credential.') },
      async handler({ platform, params }) {
        return { status: 200, body: await platform.vaults.getCredential(params.id, params.credential_id) };
      },
    }),
    route({
      method: 'DELETE', path: '/v1/vaults/{id}/credentials/{credential_id}', operationId: 'deleteCredential', tag: 'vaults', auth: 'api_key',
      summary: 'Delete a credential.',
      responses: { 204: { description: 'Deleted.' }, 404: error('No such credential.') },
      async handler({ platform, params }) {
        await platform.vaults.deleteCredential(params.id, params.credential_id);
        return { status: 204 };
      },
    }),
  ];
}
