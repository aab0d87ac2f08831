# Cadenza's production image: Node 24 runs the TypeScript sources natively (type stripping), so there is no
# build step; the image is the source plus the production dependencies. The default command is the API;
# docker-compose.yml runs the worker from the same image with `node bin/worker.ts`.
FROM node:24-slim

ENV NODE_ENV=production
WORKDIR /app

# Dependencies first, so that a source change does not reinstall them.
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

COPY . .
# DATA_DIR, used only by the embedded mode (no DATABASE_URL), must be writable by the non-root user.
RUN mkdir -p /app/.data && chown node:node /app/.data

USER node
EXPOSE 8080
CMD ["node", "bin/api.ts"]
