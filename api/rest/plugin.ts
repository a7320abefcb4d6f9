import type { FastifyInstance } from 'fastify';
import { AppError } from '../../domain/kit/errors';
import { errorBody } from './http';
import { agentsDialect, restRoutes, type RestOptions } from './routes';

/** The REST API under /api: the discovery index and every catalog operation. */
export async function restApi(app: FastifyInstance, options: RestOptions & { apiBaseUrl: string }): Promise<void> {
  app.setNotFoundHandler((request, reply) => {
    const error = new AppError('not_found', `No route ${request.method} ${request.url.split('?')[0]}; see GET /api/v1/me for the endpoints`);
    return reply.status(404).send(errorBody(error));
  });
  app.get('/', async () => ({
    success: true,
    data: { name: 'Gatehouse', version: 'v1', discovery: `${options.apiBaseUrl}/v1/me` },
  }));
  await app.register(restRoutes, { pipeline: options.pipeline, dialect: agentsDialect });
}
