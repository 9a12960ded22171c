# tollgate's container image (docs/deploy.md). The base is a build argument, so that a mirror or a locally
# made Node 20 image can stand in for the official one:
#   docker build -t tollgate .
#   docker build --build-arg DEVNET=true -t tollgate .                     # with anvil, for the devnet
#   docker run -p 8545:8545 -v tollgate-data:/data tollgate                 # the embedded devnet (DEVNET=true)
#   docker run -p 8545:8545 -v ./prod.yaml:/etc/tollgate/tollgate.yaml:ro \
#     -e TOLLGATE_CONFIG=/etc/tollgate/tollgate.yaml -e TOLLGATE_POSTGRES_URL=... tollgate   # production
ARG NODE_IMAGE=node:20-bookworm-slim

# npm ci of package.json and the lock file, the native addon built: the build and runtime stages
# start here, and a change to the sources leaves this stage, and the runtime dependencies made from
# it, as they were (built where the last build's cache is, a new image's node_modules layer is the
# old one: an update ships dist/)
FROM ${NODE_IMAGE} AS modules
# on every layer of the build's stages, so that a build cache can find and prune the ones a new build replaced
LABEL tollgate.stage=build
# better-sqlite3's native addon: a prebuilt binary when GitHub is reachable, else compiled here
RUN apt-get update -q \
  && apt-get install -y -q --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
# no scripts: `prepare` would build before the sources are in; the one addon is built on its own
RUN npm ci --ignore-scripts --no-audit --no-fund && npm rebuild better-sqlite3

# dist/ from the sources
FROM modules AS build
COPY tsconfig.json ./
COPY scripts/buildServer.js scripts/buildDashboard.js scripts/thirdPartyLicences.js scripts/
COPY src src
COPY web web
RUN npm run build

# only the runtime dependencies (the packages bundled into dist/ are dev dependencies, which the prune
# removes); better-sqlite3's sources and objects are not needed once its addon is built. The embedded
# devnet's node (anvil, a dev dependency and optional peer: 44 MB) only when asked for: with
# DEVNET=true, anvil and its platform's binary (as npm ci installed them) are put back after the prune
FROM modules AS runtime
ARG DEVNET=false
RUN if [ "$DEVNET" = true ]; then mkdir /tmp/devnet && cp -a node_modules/@foundry-rs/anvil node_modules/@foundry-rs/anvil-* /tmp/devnet/; fi \
  && npm prune --omit=dev --ignore-scripts --no-audit --no-fund \
  && if [ "$DEVNET" = true ]; then mkdir -p node_modules/@foundry-rs && mv /tmp/devnet/* node_modules/@foundry-rs/; fi \
  && cd node_modules/better-sqlite3 \
  && rm -rf deps src build/Release/obj build/Release/obj.target build/Release/test_extension.node build/deps

FROM ${NODE_IMAGE}
RUN groupadd --system --gid 10001 tollgate \
  && useradd --system --uid 10001 --gid tollgate --home-dir /data --no-create-home --shell /usr/sbin/nologin tollgate \
  && mkdir /data && chown tollgate:tollgate /data
WORKDIR /app
COPY --from=runtime /app/package.json ./
COPY --from=runtime /app/node_modules node_modules
COPY bin bin
COPY --from=build /app/dist dist
RUN ln -s /app/bin/tollgate.js /usr/local/bin/tollgate
# the working directory is /, so the default SQLite file (./data/tollgate.db) and the usage spool
# (./data/spool) are in the /data volume; TOLLGATE_HOST: listen on the container's every address
WORKDIR /
ENV NODE_ENV=production \
  TOLLGATE_HOST=0.0.0.0
VOLUME ["/data"]
USER tollgate
EXPOSE 8545
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.TOLLGATE_PORT||8545}/readyz`).then((r)=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# node is PID 1 and handles SIGTERM itself (`tollgate start` drains, then exits 0): no shell in between
ENTRYPOINT ["node", "/app/bin/tollgate.js"]
CMD ["start"]
