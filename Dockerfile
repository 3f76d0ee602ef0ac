# Gatehouse's images, one target each, built from the repository root:
#   docker build --target api -t gatehouse/api .
#   docker build --target standby -t gatehouse/standby .
#   docker build --target operator -t gatehouse/operator .
# Each image installs only its own workspace's production dependencies, from one lockfile: the stage that
# brings the manifests is shared, so a manifest added to the repository is added here once.

FROM node:24-slim AS manifests
WORKDIR /app
COPY package.json package-lock.json ./
# npm ci checks the lockfile against every workspace, so every workspace manifest comes along.
COPY core/package.json core/
COPY api/package.json api/
COPY standby/package.json standby/
COPY operator/package.json operator/
COPY sdk/node/package.json sdk/node/
COPY sdk/web/package.json sdk/web/
COPY loadtest/package.json loadtest/

FROM manifests AS standby-deps
RUN npm ci --omit=dev --workspace @gatehouse/standby --include-workspace-root=false --no-audit --no-fund

FROM manifests AS operator-deps
RUN npm ci --omit=dev --workspace @gatehouse/operator --include-workspace-root=false --no-audit --no-fund

FROM manifests AS api-deps
RUN npm ci --omit=dev --workspace @gatehouse/api --include-workspace-root=false --no-audit --no-fund

# The standby service (both roles; STANDBY_ROLE picks one).
FROM node:24-slim AS standby
ENV NODE_ENV=production STANDBY_HOST=0.0.0.0 STANDBY_DATA_DIR=/data
WORKDIR /app
COPY --from=standby-deps /app/node_modules node_modules
COPY package.json ./
COPY core core
COPY standby standby
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 8081 8082
CMD ["node", "standby/src/server.ts"]

# The operator. Node 24 runs the TypeScript sources directly (type stripping): no build step, no dev
# dependencies.
FROM node:24-slim AS operator
ENV NODE_ENV=production
WORKDIR /app
COPY --from=operator-deps /app/node_modules node_modules
COPY package.json ./
COPY operator/package.json operator/
COPY operator/src operator/src
# The numeric uid of the image's `node` user, so runAsNonRoot can verify it.
USER 1000:1000
EXPOSE 8080 8081
CMD ["node", "operator/src/main.ts"]

# The main API, the default target (the last stage). The image runs the API as one JavaScript file
# (api/dist/server.js, built here by esbuild, a production dependency of the API) rather than its
# TypeScript sources: Node's type stripping costs resident memory in every process, and the API has a
# budget of 150 MiB per process. The sources ship beside the bundle (migrations, the console's UI and the
# widget's sources are read from there). The API forks its image renderers (IMAGE_POOL_WORKERS processes,
# from api/dist/image-worker.js, with their own Node flags) on the first image challenge: the canvas
# library and its memory live there, not in the API process; they exit with it.
FROM node:24-slim AS api
# jemalloc as the API's allocator instead of glibc's malloc (docs/decisions.md, "Runtime and API memory").
# V8's background compiler threads allocate and free short-lived memory, which glibc keeps resident in their
# arenas as free chunks; jemalloc hands freed pages back after 100 ms from a background thread, so the
# process's peak resident memory stays lower at no extra CPU per request. Named without a path, the loader
# finds it in the architecture's library folder. The image renderers the API forks keep glibc's malloc (their
# environment leaves LD_PRELOAD out).
RUN apt-get update && apt-get install -y --no-install-recommends libjemalloc2 && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8080 DATA_DIR=/data
ENV LD_PRELOAD=libjemalloc.so.2 MALLOC_CONF=background_thread:true,dirty_decay_ms:100,muzzy_decay_ms:0
WORKDIR /app
COPY --from=api-deps /app/node_modules node_modules
COPY package.json ./
COPY core core
COPY api api
# The API serves the standby's siteverify and checks its store at start-up (@gatehouse/standby).
COPY standby standby
COPY sdk/node sdk/node
COPY sdk/web sdk/web
# The widget is built here too: the API builds it on first request only where @gatehouse/web is installed, and
# this production install does not link it (without this build the image would answer 503 to
# /widget/gatehouse.js).
RUN node api/scripts/build-server.ts && node sdk/web/build.ts && mkdir -p /data && chown node:node /data
USER node
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=2s CMD node -e "fetch('http://127.0.0.1:8080/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# A young generation of 8 MiB semi-spaces instead of V8's larger default for this heap size: less resident
# memory per process at a small cost in scavenges. An old generation capped at 256 MiB, far above what the
# API holds live (its caches are bounded): V8 then grows the heap by a smaller factor of its live size
# between full collections than it does on a machine with much memory, keeping peaks down for a CPU cost
# within noise (docs/decisions.md, "Runtime and API memory"). Override both in the container's args.
CMD ["node", "--max-semi-space-size=8", "--max-old-space-size=256", "api/dist/server.js"]
