# syntax=docker/dockerfile:1
# Build stage: compiles TypeScript and better-sqlite3's native addon.
FROM node:20-bookworm-slim AS build
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY bin ./bin
COPY src ./src
COPY migrations ./migrations
COPY bench ./bench
RUN npm ci && npm run build && npm prune --omit=dev

# Runtime stage: production dependencies only, non-root, the mirror on a volume.
FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    WSMIRROR_DATABASE=/data/mirror.sqlite \
    WSMIRROR_HTTP_HOST=0.0.0.0
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/bin ./bin
COPY config.example.json ./
RUN ln -s /app/bin/wsmirror.js /usr/local/bin/wsmirror && mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 9464
ENTRYPOINT ["wsmirror"]
CMD ["run"]
