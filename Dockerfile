# One image for the API, the Temporal worker and the media gateway; the command picks the role.

# The web dashboard, built once (web/dist); the API serves it at /.
FROM node:20-bookworm-slim AS web
WORKDIR /app
COPY package.json package-lock.json ./
COPY web/package.json web/
RUN npm ci --no-audit --no-fund --ignore-scripts=false
COPY . .
RUN node scripts/build-web.js --force

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
COPY web/package.json web/
RUN npm ci --omit=dev --ignore-scripts=false
COPY . .
COPY --from=web /app/web/dist web/dist
EXPOSE 8000 8001
CMD ["npx", "tsx", "src/api/main.ts"]
