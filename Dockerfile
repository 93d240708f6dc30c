# One image for the API, the Temporal worker and the media gateway; the command picks the role.
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts=false
COPY . .
EXPOSE 8000 8001
CMD ["npx", "tsx", "src/api/main.ts"]
