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
# /data is the node user's alone (0700): the mirror holds customer conversations.
RUN ln -s /app/bin/wsmirror.js /usr/local/bin/wsmirror && mkdir -p /data && chown node:node /data && chmod 0700 /data
USER node
VOLUME ["/data"]
EXPOSE 9464
# Liveness in node (the slim image has no curl): /healthz answers 200 while the daemon makes
# progress, as writer or standby; see docs/operations.md. Port 0 (server disabled) counts as healthy.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "const p=process.env.WSMIRROR_HTTP_PORT||'9464';if(p==='0')process.exit(0);fetch('http://127.0.0.1:'+p+'/healthz',{signal:AbortSignal.timeout(4000)}).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["wsmirror"]
CMD ["run"]
