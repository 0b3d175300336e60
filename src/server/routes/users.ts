/** /v1/users: end users, their vaults and their sessions. */
import { route, type Route } from '../route.js';
import { SessionView, UserInput, UserUpdateInput, UserView, VaultInput, VaultView, pageOf } from '../api/index.js';
import { PAGE_QUERY, errorResponse as error } from '../schemas.js';
import { mapPage, pageRequest, sessionView, userView, vaultView } from '../views.js';

export function userRoutes(): Route[] {
  return [
    route({
      method: 'POST', path: '/v1/users', operationId: 'createUser', tag: 'users', auth: 'api_key',
      summary: 'Add an end user under an id your application chooses. A user owns vaults, and sessions are opened for a user (createSession\'s user_id): ' +
        'a user\'s session uses that user\'s vaults and never another user\'s.',
      body: { kind: 'json', schema: UserInput },
      responses: {
        201: { description: 'Created.', schema: UserView }, 409: error('A user with this id exists (user_exists).'),
        422: error('The id is not of the accepted form, or a field is too long (user.id, user.field).'),
      },
      async handler({ platform, body }) {
        return { status: 201, body: userView(await platform.users.create(body)) };
      },
    }),
    route({
      method: 'GET', path: '/v1/users', operationId: 'listUsers', tag: 'users', auth: 'api_key',
      summary: 'List end users, by id.', query: PAGE_QUERY,
      responses: { 200: { description: 'A page of users.', schema: pageOf(UserView) } },
      async handler({ platform, query }) {
        return { status: 200, body: mapPage(await platform.users.list(pageRequest(query)), userView) };
      },
    }),
    route({
      method: 'GET', path: '/v1/users/{id}', operationId: 'getUser', tag: 'users', auth: 'api_key',
      summary: 'Get an end user.',
      responses: { 200: { description: 'The user.', schema: UserView }, 404: error('No such user.') },
      async handler({ platform, params }) {
        return { status: 200, body: userView(await platform.users.get(params.id)) };
      },
    }),
    route({
      method: 'PUT', path: '/v1/users/{id}', operationId: 'updateUser', tag: 'users', auth: 'api_key',
      summary: 'Replace an end user\'s display fields (its id stays).',
      body: { kind: 'json', schema: UserUpdateInput },
      responses: { 200: { description: 'The user as it is now.', schema: UserView }, 404: error('No such user.'), 422: error('A field is too long (user.field).') },
      async handler({ platform, params, body }) {
        return { status: 200, body: userView(await platform.users.update(params.id, body)) };
      },
    }),
    route({
      method: 'DELETE', path: '/v1/users/{id}', operationId: 'deleteUser', tag: 'users', auth: 'api_key',
      summary: 'Delete an end user, its vaults with their credentials, and its sessions: their calls are stopped and their volumes removed, ' +
        'and every replica refuses them at once.',
      responses: { 204: { description: 'Deleted.' }, 404: error('No such user.') },
      async handler({ platform, params }) {
        await platform.users.delete(params.id);
        return { status: 204 };
      },
    }),
    route({
      method: 'POST', path: '/v1/users/{id}/vaults', operationId: 'createUserVault', tag: 'users', auth: 'api_key',
      summary: 'Create a vault the user owns: only the user\'s sessions use it. Add credentials with addCredential, as to any vault.',
      body: { kind: 'json', schema: VaultInput },
      responses: { 201: { description: 'Created.', schema: VaultView }, 404: error('No such user.') },
      async handler({ platform, params, body }) {
        return { status: 201, body: vaultView(await platform.vaults.createVault(body.name, params.id)) };
      },
    }),
    route({
      method: 'GET', path: '/v1/users/{id}/vaults', operationId: 'listUserVaults', tag: 'users', auth: 'api_key',
      summary: 'The vaults the user owns.', query: PAGE_QUERY,
      responses: { 200: { description: 'A page of vaults.', schema: pageOf(VaultView) }, 404: error('No such user.') },
      async handler({ platform, params, query }) {
        return { status: 200, body: mapPage(await platform.users.vaults(params.id, pageRequest(query)), vaultView) };
      },
    }),
    route({
      method: 'GET', path: '/v1/users/{id}/sessions', operationId: 'listUserSessions', tag: 'users', auth: 'api_key',
      summary: 'The sessions opened for the user (of any agent).', query: PAGE_QUERY,
      responses: { 200: { description: 'A page of sessions.', schema: pageOf(SessionView) }, 404: error('No such user.') },
      async handler({ platform, params, query }) {
        return { status: 200, body: mapPage(await platform.users.sessionsOf(params.id, pageRequest(query)), sessionView) };
      },
    }),
  ];
}
