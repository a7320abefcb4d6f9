# syntax=docker/dockerfile:1
#
# Gatehouse production image: one image for `gatehouse api` (the default) and `gatehouse worker`.
# The sources are TypeScript run through tsx at runtime; the one build step is the console (web/, React
# and Vite), built in a stage of its own so that the image carries only its static files.
#
#   docker build -t gatehouse .
#   docker run --rm -e DATABASE_URL=… -e TEMPORAL_ADDRESS=… -p 3000:3000 gatehouse          # api
#   docker run --rm -e DATABASE_URL=… -e TEMPORAL_ADDRESS=… gatehouse worker                 # worker
#
# Debian (glibc), not Alpine: @temporalio/core-bridge ships prebuilt native libraries for
# x86_64/aarch64-unknown-linux-gnu only, and the worker's workflow bundler needs @swc/core's gnu binary.
ARG NODE_VERSION=20

# The console: web/ built into web/dist with the dev dependencies (Vite, React), which stay in this stage.
FROM node:${NODE_VERSION}-bookworm-slim AS console
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY bin/build-console.js ./bin/
COPY web/ ./web/
RUN node bin/build-console.js

FROM node:${NODE_VERSION}-bookworm-slim

ENV NODE_ENV=production \
    NPM_CONFIG_UPDATE_NOTIFIER=false

WORKDIR /app

# Dependencies first, so that a change to the sources reuses this layer. Install scripts must run
# (no --ignore-scripts): esbuild (used by tsx) and @swc/core (used by the Temporal workflow bundler)
# check their platform binaries in postinstall; the binaries themselves come from optional
# dependencies resolved for this image's platform.
# npm runs the package's prepare (bin/build-console.js), which finds no Vite here and keeps the built console.
COPY package.json package-lock.json ./
COPY bin/build-console.js ./bin/
RUN npm ci --omit=dev --no-audit --no-fund \
 && npm cache clean --force

# The sources the service needs at runtime (db/migrations and policy/default-policy.cedar are read
# from disk; workflows/ is bundled by the worker at start).
COPY tsconfig.json ./
COPY bin/ ./bin/
COPY cli/ ./cli/
COPY runtime/ ./runtime/
COPY api/ ./api/
COPY worker/ ./worker/
COPY workflows/ ./workflows/
COPY activities/ ./activities/
COPY domain/ ./domain/
COPY data-import/ ./data-import/
COPY policy/ ./policy/
COPY metrics/ ./metrics/
COPY db/ ./db/
COPY --from=console /app/web/dist/ ./web/dist/

# Everything above stays owned by root (read-only for the service). GATEHOUSE_DATA_DIR (default .data)
# is only written when no DATABASE_URL is set (the embedded database); make it writable anyway.
RUN mkdir -p /app/.data && chown node:node /app/.data

USER node

ENV HOST=0.0.0.0 \
    PORT=3000

EXPOSE 3000

ENTRYPOINT ["node", "bin/gatehouse.js"]
CMD ["api"]
