# The merchant payments service: one image for every role (`bin/service --role api|worker|all`).

# Build: the TypeScript compiled to dist/ (`npm run build`), with the dev dependencies it needs.
FROM node:20-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
# The sources and build files (.dockerignore leaves out tests, benchmarks, docs and local data).
COPY . .
RUN npm run build

FROM node:20-slim
WORKDIR /app

# Dependencies first (cached while only the sources change); no dev dependency in the image.
COPY package.json package-lock.json ./
RUN npm ci --omit=dev && npm cache clean --force

# The service runs the build (bin/service). The sources stay for the operator's commands
# (`npm run projections|audit|statement`), which run them through tsx.
COPY --from=build /app/dist ./dist
COPY bin ./bin
COPY tsconfig.json ./
COPY domain ./domain
COPY commands ./commands
COPY projections ./projections
COPY api ./api
COPY workers ./workers
COPY infra ./infra
COPY dashboard ./dashboard
COPY cli ./cli
COPY app ./app
COPY webhook-verifier ./webhook-verifier

# $DATA_DIR holds the generated operator token and server key when they are not given (and the
# embedded PostgreSQL's files in the embedded mode); docker-compose.yml mounts a volume here.
RUN mkdir -p /app/data && chown node:node /app/data
USER node

ENV HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/app/data
EXPOSE 3000

CMD ["bin/service"]
