# The merchant payments service: one image for every role (`npm start -- --role api|worker|all`).
FROM node:20-slim

WORKDIR /app

# Dependencies first (cached while only the sources change). tsx runs the TypeScript sources
# directly, so there is no build step and no dev dependency in the image.
COPY package.json package-lock.json ./
RUN npm ci --omit=dev && npm cache clean --force

COPY tsconfig.json ./
COPY src ./src

# $DATA_DIR holds the generated operator token and server key when they are not given (and PGlite's
# files in the embedded mode); docker-compose.yml mounts a volume here.
RUN mkdir -p /app/data && chown node:node /app/data
USER node

ENV HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/app/data
EXPOSE 3000

CMD ["npm", "start"]
