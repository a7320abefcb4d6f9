import type { FastifyInstance } from 'fastify';
import { AppError } from '../../domain/kit/errors';
import { allAbilities } from '../../domain/identity/abilities';
import { scopesToAskFor } from '../catalog/access';
import { bearerChallenge, errorBody } from './http';
import { agentsDialect, restRoutes, type RestOptions } from './routes';

/**
 * The REST API under /api: the discovery index and every catalog operation. A request without a live token is
 * answered 401 with a Bearer challenge naming the API's OAuth metadata (`resourceMetadataUrl`); an OAuth token
 * without the scopes a call needs, 403 with a challenge naming them.
 */
export async function restApi(app: FastifyInstance, options: RestOptions & { apiBaseUrl: string; resourceMetadataUrl: string }): Promise<void> {
  const { resourceMetadataUrl } = options;
  app.addHook('onSend', async (request, reply, payload) => {
    if (reply.statusCode === 401 && !reply.hasHeader('www-authenticate')) {
      reply.header('www-authenticate', bearerChallenge({ resourceMetadataUrl, scopes: allAbilities, error: request.headers.authorization ? 'invalid_token' : undefined }));
    }
    return payload;
  });
  app.setNotFoundHandler((request, reply) => {
    const error = new AppError('not_found', `No route ${request.method} ${request.url.split('?')[0]}; see GET /api/v1/me for the endpoints`);
    return reply.status(404).send(errorBody(error));
  });
  app.get('/', async () => ({
    success: true,
    data: { name: 'Gatehouse', version: 'v1', discovery: `${options.apiBaseUrl}/v1/me` },
  }));
  const dialect = {
    ...agentsDialect,
    challengeOf: (error: AppError) =>
      error.code === 'insufficient_scope'
        ? bearerChallenge({ resourceMetadataUrl, scopes: scopesToAskFor(error), error: 'insufficient_scope', description: error.message })
        : undefined,
  };
  await app.register(restRoutes, { pipeline: options.pipeline, dialect });
}
