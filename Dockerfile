# The API and the worker (one image, two commands), for docker-compose.yml.
FROM node:24-bookworm-slim

WORKDIR /app
ENV NODE_ENV=production

# Dependencies first, so code changes do not reinstall them. Optional dependencies stay: tsx needs
# esbuild's platform binary. The embedded PostgreSQL binaries come along but are unused here
# (DATABASE_URL is always set in compose).
# .npmrc: onnxruntime-node's postinstall must not try to download CUDA files (docs/development.md).
COPY package.json package-lock.json .npmrc ./
# The typed client is an npm workspace of the repository: npm ci needs its package.json.
COPY clients/typescript/package.json ./clients/typescript/
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

COPY api ./api
COPY dashboard ./dashboard
COPY activities ./activities
COPY db ./db
COPY lib ./lib
COPY scripts ./scripts
COPY workers ./workers
COPY workflows ./workflows
COPY tsconfig.json ./

USER node
ENV HOST=0.0.0.0 PORT=8080
EXPOSE 8080
CMD ["node", "--import", "tsx", "api/main.ts"]
